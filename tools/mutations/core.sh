# Mutations of the engine, the tree, the cloud connector and the routes (issue 16's thirteen).
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
run 1 engine/front/parser.ts 's/const operand = this\.parseNot();/const operand = this.parseAnd();/' engine/front/parser_test.ts tests/parser_property_test.ts
run 2 engine/exec/join.ts 's/if (v === null) return null;/if (v === null \&\& false) return null;/' engine/exec/join_test.ts
run 3 engine/exec/group_table.ts 's/ \&\& (v | 0) === v//' engine/exec/group_table_test.ts engine/exec/aggregate_test.ts
run 4 home/resource_tree.ts 's/startsWith(rootReal + sep)/startsWith(rootReal)/' home/resource_tree_test.ts connectors/file/tree_store_test.ts
run 5 connectors/cloudapi/cloudapi_datastore.ts 's/hourStart(t, zone)/hourStart(t, "UTC")/' tests/cloudapi/storage_zone_test.ts
run 6 connectors/cloudapi/cloud_request.ts 's/++errors > ctx.maxErrorRetries/++errors >= ctx.maxErrorRetries/' connectors/cloudapi/cloud_request_test.ts
run 7 routes/range.ts 's/last < first/last <= first/' routes/range_test.ts
run 8 engine/values/value_ops.ts 's/"s" + k.length + ":" + k/"s" + k/' engine/values/value_ops_test.ts engine/exec/group_table_test.ts
run 9 routes/formats.ts 's/q > best.q/q >= best.q/' routes/formats_test.ts
run 10 connectors/cloudapi/hour_store.ts 's/for (const r of \[\.\.\.stored, \.\.\.records\])/for (const r of [...records, ...stored])/' connectors/cloudapi/hour_store_test.ts
run 11 engine/pattern/byte_scanner.ts 's/value <= 2147483647/value < 2147483647/' engine/pattern/byte_scanner_test.ts
run 12 engine/pattern/compile_pattern.ts 's/nullable || el\.optional || spec\.canFail/nullable || spec.canFail/' engine/pattern/compile_pattern_test.ts
run 13 engine/pattern/compile_pattern.ts 's/return `(?:${dashIsAbsent ? `${source}|-` : source}|)`;/return `(?:${dashIsAbsent ? `-|${source}` : source}|)`;/' engine/pattern/compile_pattern_test.ts
run http-date-day-kept engine/values/time_parse.ts 's/  if (dayKey !== lastDay\.key) {/  if (lastDay.key < 0) {/' engine/values/http_date_bytes_test.ts
run http-date-invalid-day-kept engine/values/time_parse.ts 's/    if (!validDate(year, month, day)) return null;/    if (!validDate(year, month, day)) return lastDay.days * DAY;/' engine/values/http_date_bytes_test.ts
run http-date-offset-sign engine/values/time_parse.ts 's/(b\[i + 21\] === 0x2d ? -1 : 1)/(b[i + 21] === 0x2b ? -1 : 1)/' engine/values/http_date_bytes_test.ts
run http-date-month engine/values/time_parse.ts 's/    case 0x736570:/    case 0x736571:/' engine/values/http_date_bytes_test.ts
run byte-scanner-date-shifted engine/pattern/byte_scanner.ts 's/? `D\[${k}\](b, s${k})`/? `D[${k}](b, s${k} + 1)`/' engine/pattern/byte_scanner_test.ts engine/exec/parse_source_test.ts
run byte-scanner-date-timestamp-kept engine/pattern/byte_scanner.ts 's/    if (ms !== lastMs) {/    if (last === null) {/' engine/pattern/byte_scanner_test.ts engine/exec/parse_source_test.ts
