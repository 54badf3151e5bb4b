/**
 * The request that runs a stored script with its arguments (docs/api.md, "POST /queries"): the
 * arguments are query parameters beside `scriptPath`, so an argument may not take the name of
 * a parameter the API reads itself (it would replace the script that runs, or be lost).
 */

/** Query parameters of `POST /queries` that are never a view's arguments. */
export const RESERVED_PARAMETERS: readonly string[] = [
  "scriptPath",
  "acceptContentType",
  "waitMillis",
];

/**
 * `/queries?scriptPath=<path>&<arguments>`; throws an Error naming an argument the API would
 * read as one of its own parameters.
 *
 *   storedRunPath("/user/v.sx", { ip: "10.0.0.1" }) // "/queries?scriptPath=%2Fuser%2Fv.sx&ip=10.0.0.1"
 */
export function storedRunPath(path: string, args: Readonly<Record<string, string>>): string {
  const params = new URLSearchParams({ scriptPath: path });
  for (const [name, value] of Object.entries(args)) {
    if (RESERVED_PARAMETERS.includes(name) || name.startsWith("opt.")) {
      throw new Error(
        `the argument '${name}' cannot be given: '${name}' is a parameter of the API itself; ` +
          "rename the argument in the script's init(...)",
      );
    }
    params.append(name, value);
  }
  return `/queries?${params}`;
}
