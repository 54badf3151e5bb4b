# Mutations of the result store (actors/result_store.ts, result_read.ts), issue 29.
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
run results-in-memory-edge actors/result_store.ts 's/if (this.#dropped || last >= this.#head.length) return undefined;/if (this.#dropped || last > this.#head.length) return undefined;/' actors/result_store_test.ts actors/result_store_pins_test.ts
run results-lanes-sorted-in-order actors/result_store.ts 's/if (segments.some((s, i) => i > 0 \&\& s.lane < segments\[i - 1\]!.lane)) {/if (segments.some((s, i) => i > 0 \&\& s.lane > segments[i - 1]!.lane)) {/' actors/result_store_test.ts actors/result_store_pins_test.ts
run results-lanes-unsorted actors/result_store.ts 's/segments.sort((a, b) => a.lane - b.lane);/segments.sort((a, b) => b.lane - a.lane);/' actors/result_store_test.ts actors/result_store_pins_test.ts
run results-joined-past-last actors/result_read.ts 's/segments\[end + 1\]!.first + segments\[end + 1\]!.count - 1 <= last/segments[end + 1]!.first <= last/' actors/result_store_test.ts actors/result_store_pins_test.ts
run results-joined-any-start actors/result_read.ts 's/end + 1 < segments.length \&\& from === 0 \&\& to === s!.count - 1/end + 1 < segments.length \&\& to === s!.count - 1/' actors/result_store_test.ts actors/result_store_pins_test.ts
run results-joined-not-adjacent actors/result_read.ts 's/b.offset === a.offset + a.length \&\& sameFrame/b.offset >= a.offset \&\& sameFrame/' actors/result_store_test.ts actors/result_store_pins_test.ts
run result-pool-ignored actors/result_store.ts 's/return this\.options\.account?\.keep?\.(bytes) ?? true;/return true;/' actors/result_store_test.ts tests/api/result_limits_test.ts
run result-pool-not-given-back actors/result_quota.ts 's/this\.#inMemory -= kept;//' actors/result_quota_test.ts actors/result_store_test.ts tests/api/result_limits_test.ts
run results-follow-stays-on-lane actors/result_store.ts 's/if (this\.#endedLanes\.has(lane)) {/if (this.#endedLanes.has(-1)) {/' actors/result_store_test.ts
run results-follow-lane-skips-ahead actors/result_store.ts 's/while (k < segments\.length \&\& segments\[k\]!\.lane !== lane) k++;/while (k < segments.length \&\& segments[k]!.lane < lane) k++;/' actors/result_store_test.ts
run results-end-lane-keeps-run actors/result_store.ts 's/const kept = this\.#flushRun(lane);/const kept = undefined;/' actors/result_store_test.ts
run results-placed-lane-zero-only actors/result_store.ts 's/while (this\.#endedLanes\.has(lane)) lane++;/while (this.#endedLanes.has(lane - 1)) lane++;/' actors/result_store_test.ts
# A result read once (a synchronous answer): what its reader took is let go of.
run once-consume actors/result_store.ts 's/          if (once) this.#consume(segment);/          if (false) this.#consume(segment);/' actors/result_store_test.ts
run once-unkeep actors/result_store.ts 's/    this.options.account?.unkeep?.(segment.length);/    void 0;/' actors/result_store_test.ts
run once-budget actors/result_store.ts 's/    this.#memoryBytes -= segment.length;/    void 0;/' actors/result_store_test.ts
run once-no-other-read actors/result_store.ts 's/    if (segment.consumed) throw/    if (false) throw/' actors/result_store_test.ts
run once-sync-route routes/sync.ts 's/{ ended, queued: true, once: true }/{ ended, queued: true, once: false }/' tests/api/streamed_answer_test.ts
