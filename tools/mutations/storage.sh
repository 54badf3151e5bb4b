# Mutations of the storage (home/storage/*, home/storage_tree.ts, home/user_store.ts, rights),
# issue 29: its rights mutation, and others of the same kind.
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
run tree-right-asked home/storage_tree.ts 's/!this.may(user, right, resolved.canonical)/!this.may(user, "read", resolved.canonical)/' tests/storage/tree_rights_test.ts
run tree-right-unchecked home/storage_tree.ts 's/if (user !== undefined \&\& right \&\& !this.may(user, right, resolved.canonical)) {/if (user !== undefined \&\& right \&\& !this.may(user, right, resolved.canonical) \&\& false) {/' tests/storage/tree_rights_test.ts
run tree-hidden-name home/storage_tree.ts 's/const hidden = segments.find((s) => s.startsWith("."));/const hidden = segments.find((s) => s.startsWith(".."));/' tests/storage/tree_contract_test.ts tests/storage/tree_rights_test.ts
run tree-stat-size home/storage_tree.ts 's/: { isFolder: false, size: meta.size ?? 0, modified: meta.modified };/: { isFolder: false, size: 0, modified: meta.modified };/' tests/storage/tree_contract_test.ts tests/storage/tree_rights_test.ts
run tree-list-sorted home/storage_tree.ts 's/return \[...entries.values()\].sort((a, b) => a.name.localeCompare(b.name));/return [...entries.values()];/' tests/storage/storage_edges_test.ts
run tree-write-over-folder home/storage_tree.ts 's/if (meta?.folder) throw new ResourceConflict("exists", "a folder of that name exists");//' tests/storage/storage_edges_test.ts
run tree-write-no-parent home/storage_tree.ts 's/if (!parent?.isFolder) {/if (parent === undefined) {/' tests/storage/tree_contract_test.ts tests/storage/tree_rights_test.ts
run tree-write-created home/storage_tree.ts 's/return { created: current === null, etag/return { created: true, etag/' tests/storage/tree_contract_test.ts tests/storage/tree_rights_test.ts
run tree-remove-root home/storage_tree.ts 's/if (segments.length === 0) throw new ResourceConflict("not-empty", "the root stays");//' tests/storage/storage_edges_test.ts
run tree-remove-not-empty home/storage_tree.ts 's/if (!options.recursive \&\& await this.#hasKeysUnder(segments)) {/if (false \&\& await this.#hasKeysUnder(segments)) {/' tests/storage/tree_contract_test.ts tests/storage/tree_rights_test.ts
run tree-move-onto home/storage_tree.ts 's/if ((await this.stat(to)) !== null) {/if ((await this.stat(to)) === undefined) {/' tests/storage/storage_edges_test.ts
run tree-move-keeps-source home/storage_tree.ts 's/{ key: \[DATA, ...from\], value: null, expectedVersion: stored.version },//' tests/storage/tree_contract_test.ts tests/storage/tree_rights_test.ts
run tree-move-modified home/storage_tree.ts 's/modified: meta?.modified ?? Date.now() }),/modified: Date.now() }),/' tests/storage/storage_edges_test.ts
run tree-etag-version home/storage_tree.ts 's/update(version).digest/update("v").digest/' tests/storage/tree_contract_test.ts tests/storage/tree_rights_test.ts
run rights-own-folder home/rights.ts 's/if (isWithin(canonical, `\/users\/${user.name}`)) return true;//' home/rights_test.ts tests/storage/tree_rights_test.ts
run rights-shared-write home/rights.ts 's/const EVERYONE_SHARED: readonly Right\[\] = \["list", "execute", "read"\];/const EVERYONE_SHARED: readonly Right[] = ["list", "execute", "read", "write"];/' home/rights_test.ts tests/storage/tree_rights_test.ts
run rights-system-read home/rights.ts 's/const EVERYONE_SYSTEM: readonly Right\[\] = \["list", "execute"\];/const EVERYONE_SYSTEM: readonly Right[] = ["list", "execute", "read"];/' home/rights_test.ts tests/storage/tree_rights_test.ts
run rights-datastores-admin home/rights.ts 's/if ((right === "write" || right === "create") \&\& isWithin(canonical, DATASTORES_FOLDER)) {/if (right === "write" \&\& isWithin(canonical, DATASTORES_FOLDER)) {/' home/rights_test.ts tests/storage/tree_rights_test.ts
run rights-group home/rights.ts 's/: user.groups.includes(g.group!))/: g.group !== undefined)/' home/rights_test.ts tests/storage/tree_rights_test.ts
run rights-grant-right home/rights.ts 's/g.rights.includes(right) \&\& isWithin/isWithin/' home/rights_test.ts tests/storage/tree_rights_test.ts
run rights-root-list home/rights.ts 's/return canonical === "\/" \&\& right === "list";/return canonical === "\/";/' home/rights_test.ts tests/storage/tree_rights_test.ts
run users-duplicate home/user_store.ts 's/if (users.some((u) => u.name === name)) {/if (false) {/' home/user_store_test.ts
run users-remove-other home/user_store.ts 's/return users.filter((u) => u.name !== name);/return users.filter((u) => u.name === name);/' home/user_store_test.ts
run users-token-others home/user_store.ts 's/return users.map((u) => u.name === name ? { ...u, tokenHash } : u);/return users.map((u) => ({ ...u, tokenHash }));/' home/user_store_test.ts
run users-stale-cache home/user_store.ts 's/if (version === this.#version) return;/if (this.#version !== undefined) return;/' home/user_store_test.ts
run users-mutate-no-cas home/user_store.ts 's/expectedVersion: version,/expectedVersion: undefined,/' home/user_store_test.ts tests/storage/storage_edges_test.ts
run users-bad-zone home/user_store.ts 's/if (options.timeZone !== undefined \&\& !isValidZone(options.timeZone)) {/if (false) {/' home/user_store_test.ts
run files-cas home/storage/file_storage.ts 's/if (this.#current(entry.key) !== entry.expectedVersion) {/if (false) {/' tests/storage/storage_contract_test.ts
run files-list-hidden home/storage/file_storage.ts 's/const names = entries.filter((e) => !e.name.startsWith("."))/const names = entries.filter((e) => true)/' tests/storage/storage_contract_test.ts tests/storage/storage_edges_test.ts
run files-list-order home/storage/file_storage.ts 's/a.name < b.name ? -1 : a.name > b.name ? 1 : 0/0/' tests/storage/storage_contract_test.ts
run files-stream-from home/storage/file_storage.ts 's/if (from > 0) await file.seek(from, Deno.SeekMode.Start);//' tests/storage/storage_contract_test.ts
run files-delete-version home/storage/file_storage.ts 's/            version = null;/            version = "gone";/' tests/storage/storage_contract_test.ts tests/storage/storage_edges_test.ts
run kv-cas home/storage/kv_storage.ts 's/atomic.check({ key: headKey(entry.key), versionstamp: expected });//' tests/storage/storage_contract_test.ts
run kv-stream-start home/storage/kv_storage.ts 's/if (start < data.length) yield data.subarray(start);/if (start < data.length) yield data;/' tests/storage/storage_contract_test.ts
run kv-delete-version home/storage/kv_storage.ts 's/return { ok: true, version: last.value === null ? null : result.versionstamp };/return { ok: true, version: result.versionstamp };/' tests/storage/storage_contract_test.ts tests/storage/storage_edges_test.ts
# A share lost for the last time: the client told which, never the worker's cause.
run share-lost-cause-told actors/distributed_scans.ts 's/message: shareLost(s.k, e.state) },/message: e.error ?? shareLost(s.k, e.state) },/' tests/storage/pg_distributed_test.ts
# The vendored PostgreSQL client (vendor/README.md): a connection that dies while it starts.
run pg-types-rejection-unheld vendor/postgres/src/connection.js 's/return fetchArrayTypes().catch(noop)/return fetchArrayTypes()/' tests/storage/pg_client_start_test.ts
run pg-start-error-replayed vendor/postgres/src/connection.js '0,/^      forgetStatement()$/s///' tests/storage/pg_client_start_test.ts
