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
# PARSE's plain texts kept as their bytes (ColumnSink.span), written and cached from them.
run span-null engine/render/render_bytes.ts 's/^if (s < 0) { ${nulCode(k, json)} }$/if (s < -1) { ${nulCode(k, json)} }/' engine/render/column_bytes_test.ts
run span-end engine/pattern/byte_scanner.ts 's/    spans\[q + 1\] = at;/    spans[q + 1] = at - 1;/' engine/pattern/byte_scanner_test.ts
run span-ascii engine/pattern/byte_scanner.ts 's/if (all >= 0x80) this.ascii\[k\] = false;/if (all > 0xff) this.ascii[k] = false;/' engine/pattern/byte_scanner_test.ts
run span-absent engine/pattern/byte_scanner.ts 's/spans\[n << 1\] = v === null ? -1 : -2;/spans[n << 1] = -1;/' engine/pattern/byte_scanner_test.ts tests/rendered_scan_test.ts
run span-room engine/pattern/byte_scanner.ts 's/more.set(had.subarray(0, this.arenaAt\[k\]));/more.set(had.subarray(0, 0));/' engine/pattern/byte_scanner_test.ts tests/rendered_scan_test.ts
run span-put-text engine/pattern/byte_scanner.ts 's/if (written !== v.length) this.ascii\[k\] = false;/void written;/' engine/pattern/byte_scanner_test.ts
run span-dict-length engine/fs/column_block.ts 's/  if (e1 - s1 !== e2 - s2) return false;/  if (false) return false;/' engine/pattern/byte_scanner_test.ts
run span-dict-most engine/fs/column_block.ts 's/if (starts.length >= most) few = false;/if (starts.length > most) few = false;/' engine/pattern/byte_scanner_test.ts
run span-unspan engine/pattern/byte_scanner.ts 's/      if (typeof v === "string" \&\& v.isWellFormed()) {/      if (typeof v === "string") {/' engine/pattern/byte_scanner_test.ts
