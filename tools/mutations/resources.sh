# Mutations of moves through the API (routes/resources.ts), issue 29.
# Sourced by tools/mutation_check.sh, which defines run(): run NAME FILE SED-EXPR TEST-FILES...
run move-into-itself-swapped routes/resources.ts 's/isWithin(to.canonical, from.canonical)) {/isWithin(from.canonical, to.canonical)) {/' tests/api/resources_move_test.ts
run move-into-itself-unchecked routes/resources.ts 's/if (to.canonical !== from.canonical \&\& isWithin(to.canonical, from.canonical)) {/if (to.canonical !== from.canonical \&\& isWithin(to.canonical, from.canonical) \&\& false) {/' tests/api/resources_move_test.ts
run move-prefix-inside routes/resources.ts 's/isWithin(to.canonical, from.canonical)) {/to.canonical.startsWith(from.canonical)) {/' tests/api/resources_move_test.ts
