# Mutations of the shared queries (actors/shared_queries.ts and its parts in actors/shared/):
# issue 29's four, then others of admission, leases, asks, records and result pages; last, the
# query directory's local and remote handles (actors/query_directory.ts, query_handles.ts).
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
T="actors/shared/slots_test.ts actors/shared/leases_test.ts actors/shared/asks_test.ts actors/shared/records_test.ts actors/shared/result_pages_test.ts actors/shared_queries_test.ts"
# shellcheck disable=SC2086
{
# Issue 29: a new query takes a free slot ahead of queries already waiting.
run sq-admit-ahead actors/shared/slots.ts 's/if (free \&\& slots.queued.length === 0) {/if (free) {/' $T
# Issue 29: a server promotes its own queued queries ahead of other servers' older ones.
run sq-promote-own-first actors/shared/slots.ts 's/return slots.queued.slice(0, free).filter((s) => mine.has(s.id));/return slots.queued.filter((s) => mine.has(s.id)).slice(0, free);/' $T
# Issue 29: a renewed lease not noticed (a live server taken for dead after cluster.lease).
run sq-lease-renewal-unnoticed actors/shared/leases.ts 's/if (!seen || seen.version !== version) {/if (!seen) {/' $T
# Issue 29: a server consumes cancel/free requests meant for another server's queries.
run sq-asks-of-others actors/shared/asks.ts 's/      if (!mine(queryId)) continue;//' $T
run sq-admit-running-bound actors/shared/slots.ts 's/const free = slots.running.length < limits.maxRunning;/const free = slots.running.length <= limits.maxRunning;/' $T
run sq-admit-queue-bound actors/shared/slots.ts 's/slots.queued.length < limits.maxQueued/slots.queued.length <= limits.maxQueued/' $T
run sq-promote-count actors/shared/slots.ts 's/const free = maxRunning - slots.running.length;/const free = maxRunning - slots.running.length + 1;/' $T
run sq-without-storing actors/shared/slots.ts 's/const storing = (slots.storing ?? \[\]).filter((s) => !ids.has(s.id));/const storing = slots.storing ?? [];/' $T
run sq-handover-ended actors/shared/slots.ts 's/running: next.ended() ? running : \[...running, { id, server, at }\],/running: [...running, { id, server, at }],/' $T
run sq-conflict-own-key actors/shared/slots.ts 's/if (lost !== SLOTS.join("\/")) {/if (lost === SLOTS.join("\/")) {/' $T
run sq-lease-edge actors/shared/leases.ts 's/if (now - seen.since <= this.leaseMs) return false;/if (now - seen.since < this.leaseMs) return false;/' $T
run sq-lease-keep-only actors/shared/leases.ts 's/if (!servers.has(server)) this.#seen.delete(server);/if (servers.has(server)) this.#seen.delete(server);/' $T
run sq-asks-kinds actors/shared/asks.ts 's/if (what === "cancel" || what === "free") yield/if (what === "cancel") yield/' $T
run sq-list-answered actors/shared/records.ts 's/if (record.freed || record.answered || !visible(record.owner)) continue;/if (record.freed || !visible(record.owner)) continue;/' $T
run sq-failed-change actors/shared/records.ts 's/{ millis: now, from: record.status.state, to: "FAILED" },/{ millis: now, from: "RUNNING", to: "FAILED" },/' $T
run sq-pages-last actors/shared/result_pages.ts 's/page <= Math.floor(last \/ result.pageItems)/page < Math.floor(last \/ result.pageItems)/' $T
run sq-pages-batch actors/shared/result_pages.ts 's/yield items.slice(i, Math.min(to, i + READ_BATCH - 1) + 1);/yield items.slice(i, Math.min(to, i + READ_BATCH - 1));/' $T
run sq-pages-absent actors/shared/result_pages.ts 's/if (values\[j\] !== ABSENT)/if (values[j] !== undefined)/' $T
run sq-free-asks-own actors/shared_queries.ts 's/if (found \&\& found.record.server !== this.serverId) await/if (found) await/' $T
run sq-stop-fails actors/shared_queries.ts 's/await this.#fail(id, "the server that ran this query stopped")/await Promise.resolve(id)/' $T
D="tests/storage/query_handle_contract_test.ts"
run dir-remote-owner actors/query_directory.ts 's/if (!found || (found.record.owner !== user.name \&\& !user.admin)) return { kind: "unknown" };/if (!found) return { kind: "unknown" };/' $D
run dir-remote-freed actors/query_directory.ts 's/if (found.record.freed) return { kind: "expired" };//' $D
run dir-remote-kept actors/query_handles.ts 's/this.kept = !(record.answered \&\& this.finished());/this.kept = true;/' $D
run dir-live-stop-frees actors/query_handles.ts 's/return { stopped: "freed", status };/return { stopped: "cancelled", status };/' $D
run dir-events-resume actors/query_event_feed.ts 's/if (resume) missed(first);//' $D
run dir-remote-zone actors/query_handles.ts 's/if (record.owner === caller.name) return caller;/return caller;/' $D
# The census of a default query.maxRunning: a dead server's slots still counted; this server's
# own lease counted twice; a lease's slots ignored.
run sq-census-stale actors/shared/leases.ts 's/if (now - live.since <= this.leaseMs) slots += live.slots;/slots += live.slots;/' $T
run sq-census-self actors/shared/leases.ts 's/if (server === self) continue;/if (server === "") continue;/' $T
run sq-census-slots actors/shared_queries.ts 's/return this.options.maxRunning + this.#othersSlots;/return this.options.maxRunning;/' $T
# A sweep asked for during another returns at once (it read the leases before the call).
run sweep-during-sweep-returns actors/shared_queries.ts 's/    if (this.#sweeping !== null) {/    if (this.#sweeping !== null) { return Promise.resolve();/' $T
}
