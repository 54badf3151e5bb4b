# Mutations of READ_JSON (engine/exec/read_json_source.ts), issue 29.
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
run json-lines-escape engine/exec/read_json_source.ts '/^class ObjectSplitter/,/^class ArraySplitter/s/else if (c === 0x5c \/\* \\ \*\/) this.#escaped = true;/else if (false) this.#escaped = true;/' engine/exec/read_json_source_test.ts
run json-lines-escape-kept engine/exec/read_json_source.ts '/^class ObjectSplitter/,/^class ArraySplitter/s/if (this.#escaped) this.#escaped = false;/if (this.#escaped) this.#escaped = true;/' engine/exec/read_json_source_test.ts
run json-array-escape engine/exec/read_json_source.ts '/^class ArraySplitter/,$s/else if (c === 0x5c \/\* \\ \*\/) this.#escaped = true;/else if (false) this.#escaped = true;/' engine/exec/read_json_source_test.ts
run json-picker-inherited engine/exec/read_json_source.ts 's/row\[name\] = Object.hasOwn(v, name) ? v\[name\]! : null;/row[name] = v[name] ? v[name] : null;/' engine/exec/read_json_source_test.ts
run json-picker-in engine/exec/read_json_source.ts 's/row\[name\] = Object.hasOwn(v, name) ? v\[name\]! : null;/row[name] = name in v ? v[name] : null;/' engine/exec/read_json_source_test.ts
run json-picker-undefined engine/exec/read_json_source.ts 's/row\[name\] = Object.hasOwn(v, name) ? v\[name\]! : null;/row[name] = v[name] ?? null;/' engine/exec/read_json_source_test.ts
