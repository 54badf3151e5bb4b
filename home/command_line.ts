/**
 * The command line of main.ts, parsed into a tagged union. Mistakes are UsageErrors, which
 * main.ts answers with the usage text and exit code 2.
 */

import { parseArgs } from "node:util";

export const USAGE = `Usage:
  main.ts serve [--home DIR] [--set key=value]...
  main.ts user add NAME [--admin] [--group G]... [--timezone ZONE] [--home DIR]
  main.ts user list [--home DIR]
  main.ts user remove NAME [--home DIR]
  main.ts user token NAME [--home DIR]
  main.ts rights show [--home DIR]
  main.ts rights set FILE [--home DIR]
  main.ts sigma convert RULE.yml... [--target T] [--store S] [--mapping FILE.json]...
  main.ts help

--home defaults to $TRAWL_HOME, else ./trawl-home.
'rights' reads or replaces the rights where the home keeps them (conf/rights.json, or the KV).
'user add' and 'user token' print the new token as the last line.
'sigma convert' prints each rule's Trawl script or why it is not converted, as JSON, with the
built-in mappings or those of --mapping (docs/detections.md); it reads no home.`;

export type Command =
  | { readonly kind: "help" }
  | { readonly kind: "serve"; readonly home: string; readonly overrides: Record<string, string> }
  | {
    readonly kind: "user add";
    readonly home: string;
    readonly name: string;
    readonly admin: boolean;
    readonly groups: string[];
    readonly timeZone?: string;
  }
  | { readonly kind: "user list"; readonly home: string }
  | { readonly kind: "user remove"; readonly home: string; readonly name: string }
  | { readonly kind: "user token"; readonly home: string; readonly name: string }
  | { readonly kind: "rights show"; readonly home: string }
  | { readonly kind: "rights set"; readonly home: string; readonly file: string }
  | {
    readonly kind: "sigma convert";
    readonly files: string[];
    readonly target?: string;
    readonly store?: string;
    readonly mappings: string[];
  };

/** A command line that does not fit USAGE; the message says what is wrong. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

type OptionSpec = NonNullable<Parameters<typeof parseArgs>[0]>["options"];

const HOME = { home: { type: "string" } } as const;

function parse<O extends OptionSpec>(args: string[], options: O, positionals: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (parsed.positionals.length !== positionals.length) {
    const expected = positionals.length === 0 ? "no arguments" : positionals.join(" ");
    throw new UsageError(`expected ${expected}, found '${parsed.positionals.join(" ")}'`);
  }
  return parsed;
}

function parseOverrides(sets: readonly string[]): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const set of sets) {
    const eq = set.indexOf("=");
    if (eq <= 0) throw new UsageError(`--set expects key=value, found '${set}'`);
    overrides[set.slice(0, eq).trim()] = set.slice(eq + 1);
  }
  return overrides;
}

/** Parses `args` (without the program name); `env` supplies TRAWL_HOME. */
export function parseCommandLine(
  args: readonly string[],
  env: { readonly TRAWL_HOME?: string | undefined } = {},
): Command {
  const [command, ...rest] = args;
  const homeOf = (home: string | undefined) => home ?? (env.TRAWL_HOME || "./trawl-home");
  switch (command) {
    case undefined:
      throw new UsageError("no command given");
    case "help":
    case "--help":
    case "-h":
      return { kind: "help" };
    case "serve": {
      const { values } = parse(rest, { ...HOME, set: { type: "string", multiple: true } }, []);
      return {
        kind: "serve",
        home: homeOf(values.home),
        overrides: parseOverrides(values.set ?? []),
      };
    }
    case "user":
      return parseUserCommand(rest, homeOf);
    case "rights": {
      const [sub, ...more] = rest;
      if (sub === "show") {
        return { kind: "rights show", home: homeOf(parse(more, HOME, []).values.home) };
      }
      if (sub === "set") {
        const { values, positionals } = parse(more, HOME, ["FILE"]);
        return { kind: "rights set", home: homeOf(values.home), file: positionals[0]! };
      }
      throw new UsageError(
        sub === undefined ? "'rights' needs a subcommand" : `unknown command 'rights ${sub}'`,
      );
    }
    case "sigma": {
      const [sub, ...more] = rest;
      if (sub !== "convert") {
        throw new UsageError(
          sub === undefined ? "'sigma' needs a subcommand" : `unknown command 'sigma ${sub}'`,
        );
      }
      let parsed;
      try {
        parsed = parseArgs({
          args: more,
          options: {
            target: { type: "string" },
            store: { type: "string" },
            mapping: { type: "string", multiple: true },
          },
          allowPositionals: true,
          strict: true,
        });
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      if (parsed.positionals.length === 0) {
        throw new UsageError("'sigma convert' needs at least one rule file");
      }
      const { target, store, mapping } = parsed.values;
      return {
        kind: "sigma convert",
        files: parsed.positionals,
        ...(target !== undefined ? { target } : {}),
        ...(store !== undefined ? { store } : {}),
        mappings: mapping ?? [],
      };
    }
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

function parseUserCommand(args: string[], homeOf: (home?: string) => string): Command {
  const [sub, ...rest] = args;
  switch (sub) {
    case "add": {
      const { values, positionals } = parse(rest, {
        ...HOME,
        admin: { type: "boolean" },
        group: { type: "string", multiple: true },
        timezone: { type: "string" },
      }, ["NAME"]);
      return {
        kind: "user add",
        home: homeOf(values.home),
        name: positionals[0]!,
        admin: values.admin ?? false,
        groups: values.group ?? [],
        ...(values.timezone !== undefined ? { timeZone: values.timezone } : {}),
      };
    }
    case "list":
      return { kind: "user list", home: homeOf(parse(rest, HOME, []).values.home) };
    case "remove":
    case "token": {
      const { values, positionals } = parse(rest, HOME, ["NAME"]);
      return { kind: `user ${sub}`, home: homeOf(values.home), name: positionals[0]! };
    }
    default:
      throw new UsageError(
        sub === undefined ? "'user' needs a subcommand" : `unknown command 'user ${sub}'`,
      );
  }
}
