# Mutations of the cloud connector (connectors/cloudapi/*), issue 29: its four, and others.
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
run token-flight-kept connectors/cloudapi/token_provider.ts 's/.finally(() => this.#inFlight.delete(key));/.finally(() => {});/' tests/cloudapi/token_flight_test.ts
run token-fresh-joins connectors/cloudapi/token_provider.ts 's/const key = `${appKey(req)}|${resource}|${fresh}`;/const key = `${appKey(req)}|${resource}`;/' tests/cloudapi/token_flight_test.ts
run token-fresh-cached connectors/cloudapi/token_provider.ts 's/skipCache: fresh,/skipCache: false,/' tests/cloudapi/token_flight_test.ts
run token-no-flight connectors/cloudapi/token_provider.ts 's/let pending = this.#inFlight.get(key);/let pending: Promise<string> | undefined = undefined;/' tests/cloudapi/token_flight_test.ts
run token-error-secret connectors/cloudapi/token_provider.ts 's/const why = hide(describe(e), req.secret);/const why = describe(e) + req.secret;/' tests/cloudapi/token_flight_test.ts
run zoned-day-23 connectors/cloudapi/zoned_hours.ts 's/for (let i = 0; i < 24; i++) {/for (let i = 0; i < 23; i++) {/' connectors/cloudapi/zoned_hours_test.ts
run zoned-whole-hours connectors/cloudapi/zoned_hours.ts 's/h = hourStart(h + 3_600_000 + 1_000, zone);/h = h + 3_600_000;/' connectors/cloudapi/zoned_hours_test.ts
run zoned-hour-seconds connectors/cloudapi/zoned_hours.ts 's/ - p.second \* 1000 - p.minute \* 60_000;/ - p.minute * 60_000;/' connectors/cloudapi/zoned_hours_test.ts
run zoned-fields-day connectors/cloudapi/zoned_hours.ts 's/dd: String(p.day).padStart(2, "0"),/dd: String(p.day),/' connectors/cloudapi/zoned_hours_test.ts
run zoned-shift-start connectors/cloudapi/zoned_hours.ts 's/for (let i = 0; i < 4 \&\& localParts(start, zone).hour !== p.hour; i++) start += 15 \* 60_000;//' connectors/cloudapi/zoned_hours_test.ts
# A completion past its grant moves the grant's end for the other servers.
run bucket-completion-not-extended actors/shared_buckets.ts 's/    if (until <= grant.until || this.#stopped) return;/    return;/' actors/shared_buckets_test.ts
