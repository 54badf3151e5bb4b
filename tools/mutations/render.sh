# Mutations of byte rendering (engine/render/render_bytes.ts), issue 29.
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
run render-tsv-cr engine/render/render_bytes.ts 's|return /\[\\t\\n\\r\\\\\]/.test(text)|return /[\\t\\n\\\\]/.test(text)|' engine/render/render_bytes_test.ts
run render-text-room engine/render/render_bytes.ts 's/this.room(3 \* n);/this.room(2 * n);/' engine/render/render_bytes_test.ts
run render-tsv-cr-text engine/render/render_bytes.ts 's/c === "\\r" ? "\\\\r"/c === "\\r" ? "\\\\n"/' engine/render/render_bytes_test.ts
run compress-pending-read-lost routes/compress.ts 's/            pending = read;/            pending = undefined;/' routes/compress_test.ts
run compress-batch-end-lost routes/compress.ts 's/        if (ended) return send({ kind: "end" });/        if (ended) return;/' routes/compress_test.ts
