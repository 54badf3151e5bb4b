# Mutations of the column cache's fill (issue 24): one sink kept for a file's blocks.
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
run sink-reset-keeps-tags engine/pattern/byte_scanner.ts 's/this\.tags\[k\]?\.fill(0, 0, this\.n);//' engine/fs/column_block_test.ts
run sink-reset-keeps-list engine/pattern/byte_scanner.ts 's/if (this\.cols\[k\]!\.length > 0) this\.cols\[k\] = \[\];//' engine/fs/column_block_test.ts
run vector-tagged-left-stale engine/fs/column_block.ts '/if (tags\[i\] !== 0) {/,/continue;/s/vec\[i\] = 0;//' engine/fs/column_block_test.ts
run second-look-breaks-range engine/exec/cached_scan.ts 's/if (first >= 0 \&\& at < next) return false;//' tests/column_cache_test.ts
run fill-uncached-block-dropped engine/exec/cached_scan.ts 's/rows = decodeBlock(bytes, false)\.scan({/rows = got.meta === null ? [] : decodeBlock(bytes, false).scan({/' tests/column_cache_test.ts
# READ_JSON's fill: flat fields from the path reader's values, the rest from rows.
run json-values-shifted engine/pattern/byte_scanner.ts 's/for (let k = 0; k < values.length; k++) this\.#put(k, n, values\[k\]);/for (let k = 0; k < values.length; k++) this.#put(k, n, values[values.length - 1 - k]);/' tests/column_cache_test.ts
run json-row-fallback-lost engine/exec/read_json_source.ts 's/return (row) => sink\.putRow(needed, row);/return () => {};/' tests/column_cache_test.ts
run json-stored-row-pushed engine/exec/read_json_source.ts 's/if (row !== STORED) push(row);/push(row);/' tests/column_cache_test.ts
