/** The `user ...` commands of the CLI, printing through `out` (one call per line). */

import type { Command } from "./command_line.ts";
import type { UserStore } from "./user_store.ts";
import type { User } from "../engine/contracts/user.ts";

type UserCommand = Extract<Command, { kind: `user ${string}` }>;

function table(users: readonly User[]): string[] {
  const rows = [
    ["NAME", "ADMIN", "GROUPS", "TIME ZONE"],
    ...users.map((
      u,
    ) => [u.name, u.admin ? "yes" : "no", u.groups.join(",") || "-", u.timeZone ?? "-"]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd());
}

/** Runs a user command against `store`; throws UserStoreError for a request it refuses. */
export async function runUserCommand(
  command: UserCommand,
  store: UserStore,
  out: (line: string) => void,
): Promise<void> {
  switch (command.kind) {
    case "user add": {
      const token = await store.add(command.name, command);
      out(`Created user '${command.name}'. Their token, shown only this once:`);
      out(token);
      return;
    }
    case "user list":
      table(await store.list()).forEach((line) => out(line));
      return;
    case "user remove":
      await store.remove(command.name);
      out(`Removed user '${command.name}'; their folder /users/${command.name} was kept.`);
      return;
    case "user token": {
      const token = await store.replaceToken(command.name);
      out(`New token for '${command.name}'; the old one no longer works:`);
      out(token);
      return;
    }
  }
}
