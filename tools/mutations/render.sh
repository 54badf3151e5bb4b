# Mutations of byte rendering (engine/render/render_bytes.ts), issue 29.
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
run render-tsv-cr engine/render/render_bytes.ts 's|return /\[\\t\\n\\r\\\\\]/.test(text)|return /[\\t\\n\\\\]/.test(text)|' engine/render/render_bytes_test.ts
run render-text-room engine/render/render_bytes.ts 's/this.room(3 \* n);/this.room(2 * n);/' engine/render/render_bytes_test.ts
run render-tsv-cr-text engine/render/render_bytes.ts 's/c === "\\r" ? "\\\\r"/c === "\\r" ? "\\\\n"/' engine/render/render_bytes_test.ts
run compress-pending-read-lost routes/compress.ts 's/            pending = read;/            pending = undefined;/' routes/compress_test.ts
run compress-batch-end-lost routes/compress.ts 's/        if (ended) return send({ kind: "end" });/        if (ended) return;/' routes/compress_test.ts
# The writer of columns (compileColumnBytesWriter) and a block's vectors and picks.
run columns-negative-int-in-place engine/render/render_bytes.ts 's/if ((v | 0) === v \&\& v >= 0) {/if ((v | 0) === v) {/' engine/render/column_bytes_test.ts
run columns-escape-in-place engine/render/render_bytes.ts 's/c < 0x80 \&\& c !== 0x22 \&\& c !== 0x5c) b\[a++\] = c;/c < 0x80 \&\& c !== 0x22) b[a++] = c;/' engine/render/column_bytes_test.ts
run columns-time-quote engine/render/render_bytes.ts 's/b\[a\] = 34; b\[e\] = 34; a = e + 1;/b[a] = 34; b[e] = 34; a = e;/' engine/render/column_bytes_test.ts
run columns-null-text engine/render/render_bytes.ts 's/const NULL_BYTES = encoder.encode("null");/const NULL_BYTES = encoder.encode("nul");/' engine/render/column_bytes_test.ts
run columns-dict-kept engine/render/render_bytes.ts 's/D${k}\[e\] = b.slice(at, a); }/D${k}[e] = b.slice(at, a - 1); }/' engine/render/column_bytes_test.ts
run block-picks-all engine/fs/column_block.ts 's/if (scan.select === undefined \&\& !scan.test \&\& !scan.keep) return "all";/if (scan.select === undefined \&\& !scan.keep) return "all";/' engine/fs/column_block_test.ts
run block-picks-partial engine/fs/column_block.ts 's/if (picks \&\& keep !== undefined \&\& !partial) return null;/if (picks \&\& keep !== undefined \&\& false) return null;/' engine/fs/column_block_test.ts
run columns-past-a-sort engine/exec/render_rows.ts 's/const fields = fused \&\& node.input.kind === "source" ?/const fields = fused ?/' tests/rendered_scan_test.ts
# PARSE's texts kept as spans of the piece (ColumnSink.keepsSpans) and written from them.
run span-null engine/render/render_bytes.ts 's/^if (s < 0) { ${nul} }$/if (s < -1) { ${nul} }/' engine/render/column_bytes_test.ts
run span-end engine/pattern/byte_scanner.ts 's/SP\[${k}\]\[q + 1\] = e${k}; }/SP[${k}][q + 1] = e${k} - 1; }/' engine/pattern/byte_scanner_test.ts
run span-unspan engine/pattern/byte_scanner.ts 's/if (this.spans\[k\] !== null \&\& this.spans\[k\] !== undefined) this.#unspan(k);/if (false) this.#unspan(k);/' engine/pattern/byte_scanner_test.ts
run span-reset engine/pattern/byte_scanner.ts 's/      this.spans\[k\] = this.#spanned\[k\]!;/      void 0;/' engine/pattern/byte_scanner_test.ts
run span-grow engine/pattern/byte_scanner.ts 's/      if (this.spans\[k\] !== null) this.spans\[k\] = more;/      void 0;/' engine/pattern/byte_scanner_test.ts tests/rendered_scan_test.ts
run span-piece engine/exec/parse_source.ts 's/if (own !== undefined) own.piece = bytes;/void 0;/' tests/rendered_scan_test.ts
