// deno-lint-ignore-file no-console
/**
 * `deno task bench`: every benchmark in one run, each printing its figures beside the reference
 * it names. Not part of CI; run it by hand on a quiet machine.
 *
 *   deno task bench [--mb 500] [--only engine,api,cloudapi,front,frontio,render,pattern]
 *
 * It generates the engine's data (bench/data/, git-ignored) when missing and installs DuckDB and
 * ClickHouse (chDB) for Node (bench/node/) on first use.
 */

const DENO = Deno.execPath();
const here = new URL(".", import.meta.url).pathname;
const root = new URL("..", import.meta.url).pathname;

function arg(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function run(title: string, cmd: string, args: string[], cwd = root): Promise<boolean> {
  console.log(`\n## ${title}\n`);
  const { code } = await new Deno.Command(cmd, { args, cwd, stdout: "inherit", stderr: "inherit" })
    .output();
  if (code !== 0) console.log(`(${title} exited with ${code})`);
  return code === 0;
}

async function main(): Promise<void> {
  const mb = arg("mb") ?? "500";
  const only = new Set(
    (arg("only") ?? "front,frontio,render,pattern,engine,api,cloudapi").split(","),
  );
  let ok = true;

  if (only.has("front")) {
    ok = await run("Front end: check()", DENO, ["bench", "bench/front_bench.ts"]) && ok;
  }
  if (only.has("frontio")) {
    ok = await run("The connection front: downloads, uploads, kept-alive GETs", DENO, [
      "run",
      "--allow-all",
      "bench/front_io_bench.ts",
    ]) && ok;
  }
  if (only.has("render")) {
    ok = await run("Result rows: JSON and CSV", DENO, ["bench", "bench/render_bench.ts"]) && ok;
  }
  if (only.has("pattern")) {
    ok =
      await run("PARSE patterns", DENO, ["run", "--allow-all", "bench/pattern_bench.ts", "50"]) &&
      ok;
  }
  if (only.has("engine")) {
    const data = `${here}data/signins.jsonl`;
    const stat = await Deno.stat(data).catch(() => null);
    if (!stat || Math.abs(stat.size / 1e6 - Number(mb)) > Number(mb) * 0.2) {
      ok = await run(`Generating ${mb} MB of data`, DENO, [
        "run",
        "--allow-all",
        "bench/gen_data.ts",
        "--mb",
        mb,
      ]) && ok;
    }
    if (
      !(await exists(`${here}node/node_modules/@duckdb/node-api`)) ||
      !(await exists(`${here}node/node_modules/chdb`))
    ) {
      ok = await run(
        "Installing DuckDB and chDB for Node",
        "npm",
        ["install", "--no-audit", "--no-fund"],
        `${here}node`,
      ) && ok;
    }
    ok = await run("Engine: the four tasks of issue 9 vs ClickHouse and DuckDB", DENO, [
      "run",
      "--allow-all",
      "bench/engine_bench.ts",
    ]) && ok;
    ok = await run("Column cache: first and repeated reads vs DuckDB (issue 24)", DENO, [
      "run",
      "--allow-all",
      "bench/cache_bench.ts",
    ]) && ok;
  }
  if (only.has("api")) {
    ok = await run("HTTP API", DENO, ["run", "--allow-all", "bench/api_bench.ts"]) && ok;
  }
  if (only.has("cloudapi")) {
    ok =
      await run("cloudapi:// fetching", DENO, ["run", "--allow-all", "bench/cloudapi_bench.ts"]) &&
      ok;
  }
  if (!ok) Deno.exit(1);
}

if (import.meta.main) await main();
