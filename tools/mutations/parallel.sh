# Mutations of the parallel paths (engine/exec/parallel/), issue 29.
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
run parallel-memory-share engine/exec/parallel/parallel_aggregate.ts 's/const limits = shareLimits(parallel.limits, running);/const limits = parallel.limits;/' tests/parallel_pins_test.ts
run parallel-nulls-reset engine/exec/parallel/parallel_aggregate.ts 's/render.nulls\[c\] ||= n/render.nulls[c] = n/' tests/parallel_pins_test.ts
run parallel-nulls-all engine/exec/parallel/parallel_aggregate.ts 's/render.nulls\[c\] ||= n/render.nulls[c] \&\&= n/' tests/parallel_pins_test.ts
# Issue 29's `backlog.size === 0` dropped alone is equivalent: the loop before it leaves a batch in
# the backlog only when tryTake() failed, with no await between. With that loop leaving the last
# old batch behind (credits still left), the dropped check sends a fresh batch ahead of it.
run parallel-backlog-overtaken engine/share_run.ts 's/while (backlog.size > 0 \&\& credits.tryTake())/while (backlog.size > 1 \&\& credits.tryTake())/;s/if (backlog.size === 0 \&\& credits.tryTake()) send(part);/if (credits.tryTake()) send(part);/' tests/parallel_pins_test.ts
run parallel-backlog-drain-early engine/share_run.ts 's/while (backlog \&\& backlog.size > 0) {/while (backlog \&\& backlog.size > 1) {/' tests/parallel_pins_test.ts
# Partial groups as columns (engine/table/sxt_values.ts RowColumns; the merge by IPv4 bits).
run columns-ip-row engine/table/sxt_values.ts 's/? new IpAddr(4, c\[i\]!)/? new IpAddr(4, c[0]!)/' engine/table/sxt_values_test.ts engine/exec/aggregate_test.ts
run columns-order-unchecked engine/table/sxt_values.ts 's/if (names\[j++\] !== k) return null;/j++;/' engine/table/sxt_values_test.ts
run columns-numbers-loose engine/table/sxt_values.ts 's/if (typeof v !== "number") numbers = false;/if (typeof v === "string") numbers = false;/' engine/table/sxt_values_test.ts
run merge-ipv4-bits-wrong engine/exec/aggregate.ts 's/table.findIpv4Bits(bits\[p\]!)/table.findIpv4Bits(bits[from]!)/' engine/exec/aggregate_test.ts
run merge-bytes-ip-estimate engine/exec/aggregate.ts 's|if (c instanceof Uint32Array) fixed += 24; // an IPv4 address|if (c instanceof Uint32Array) fixed += 8; // an IPv4 address|' engine/exec/aggregate_test.ts
run merge-bytes-listed-skipped engine/exec/aggregate.ts 's|for (const name of listed) bytes += estimateBytes(first\[name\]!);|for (const name of listed) bytes += 0;|' engine/exec/aggregate_test.ts
run parallel-lanes-all-at-once engine/exec/parallel/parallel_aggregate.ts 's/const running = Math\.min(shares\.length, split\.workers\.count);/const running = shares.length;/' tests/rendered_scan_test.ts
run parallel-lanes-not-finer engine/exec/parallel/parallel_aggregate.ts 's/lanes ? laneShares(total, workers\.count, workers\.laneBytes) : workers\.count,/workers.count,/' tests/rendered_scan_test.ts
run parallel-lane-end-lost engine/exec/parallel/parallel_aggregate.ts 's/yield RenderedRows\.laneEnd(k);/void k;/' tests/rendered_scan_test.ts
