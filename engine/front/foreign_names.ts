/**
 * Names that other query languages (SPL, KQL, SQL) give to commands and functions, with what
 * to write in Trawl instead: the hint of "unknown command" (parser.ts) and "unknown function"
 * (checker.ts) when a user types a habit of another language. One table, used only for names
 * Trawl does not know, so an entry never hides a command or function of ours. No imports: the
 * parser reads it too.
 */

export interface ForeignName {
  /** Lower case, as typed after `|` (a command) or before `(` (a function). */
  readonly name: string;
  readonly kind: "command" | "function";
  /** The languages that use the name. */
  readonly from: string;
  /** Ours, for "did you mean"; null when Trawl has none. */
  readonly ours: string | null;
  /** What to write instead (or why there is nothing). */
  readonly hint: string;
}

const STATS = "select(key, count(*) as n, avg(x) as m) | group(key) computes aggregates per key";
const DISTINCT = "select(a, b) | group(a, b) gives each distinct (a, b) once";
const PROJECT = "select(a, b) keeps those fields";
const ADD_FIELD = "select(*, expr as name) adds a field";
const TOP = "select(key, count(*) as n) | group(key) | sort(n desc) | limit(10)";
const WINDOW =
  "window(lag(x) as prev, lead(x) as next, sum(x) as running, row_number() as n, by: key, order: time) adds them to each row";
const PERCENTILE = "percentile(x, 0.95) is the 95th percentile, one call per percentile";

export const FOREIGN_NAMES: readonly ForeignName[] = [
  // Commands.
  {
    name: "where",
    kind: "command",
    from: "SPL, KQL, SQL",
    ours: "filter",
    hint: "filter(cond) keeps the rows where cond is true",
  },
  {
    name: "search",
    kind: "command",
    from: "SPL, KQL",
    ours: "filter",
    hint: "filter(contains(field, 'text')) keeps the rows that hold the text",
  },
  {
    name: "having",
    kind: "command",
    from: "SQL",
    ours: "filter",
    hint: "filter(cond) after the group tests its aggregates",
  },
  { name: "stats", kind: "command", from: "SPL", ours: "group", hint: STATS },
  { name: "summarize", kind: "command", from: "KQL", ours: "group", hint: STATS },
  {
    name: "count",
    kind: "command",
    from: "KQL",
    ours: "select",
    hint: "select(count(*) as n) counts the rows",
  },
  { name: "eval", kind: "command", from: "SPL", ours: "select", hint: ADD_FIELD },
  { name: "extend", kind: "command", from: "KQL", ours: "select", hint: ADD_FIELD },
  { name: "project", kind: "command", from: "KQL", ours: "select", hint: PROJECT },
  { name: "fields", kind: "command", from: "SPL", ours: "select", hint: PROJECT },
  { name: "table", kind: "command", from: "SPL", ours: "select", hint: PROJECT },
  {
    name: "rename",
    kind: "command",
    from: "SPL",
    ours: "select",
    hint: "select(old as new, other) names a field anew",
  },
  {
    name: "dedup",
    kind: "command",
    from: "SPL",
    ours: "group",
    hint: "select(key, first(x) as x) | group(key) keeps one row per key",
  },
  { name: "distinct", kind: "command", from: "KQL, SQL", ours: "group", hint: DISTINCT },
  { name: "uniq", kind: "command", from: "SPL", ours: "group", hint: DISTINCT },
  {
    name: "top",
    kind: "command",
    from: "SPL, KQL",
    ours: "group",
    hint: `${TOP} gives the 10 most frequent keys`,
  },
  {
    name: "rare",
    kind: "command",
    from: "SPL",
    ours: "group",
    hint: "select(key, count(*) as n) | group(key) | sort(n) | limit(10)",
  },
  {
    name: "head",
    kind: "command",
    from: "SPL",
    ours: "limit",
    hint: "limit(n) keeps the first n rows",
  },
  {
    name: "take",
    kind: "command",
    from: "KQL",
    ours: "limit",
    hint: "limit(n) keeps the first n rows",
  },
  {
    name: "tail",
    kind: "command",
    from: "SPL",
    ours: "limit",
    hint: "sort(time desc) | limit(n) keeps the last n by time",
  },
  {
    name: "order",
    kind: "command",
    from: "SQL, KQL",
    ours: "sort",
    hint: "order by x desc is sort(x desc)",
  },
  {
    name: "orderby",
    kind: "command",
    from: "SQL",
    ours: "sort",
    hint: "sort(expr [asc|desc], ...)",
  },
  {
    name: "mvexpand",
    kind: "command",
    from: "SPL",
    ours: "unnest",
    hint: "unnest(array_field [as name]) gives a row per element",
  },
  {
    name: "lookup",
    kind: "command",
    from: "SPL, KQL",
    ours: "join",
    hint: "join(@other on left.a = right.b), or leftjoin to keep rows without a match",
  },
  {
    name: "append",
    kind: "command",
    from: "SPL",
    ours: "union",
    hint: "union(@a, @b) appends streams",
  },
  {
    name: "parse",
    kind: "command",
    from: "KQL",
    ours: "PARSE",
    hint:
      "PARSE(pattern: ..., src: ...) is a source; regex_extract(field, '...', 1) reads a part of a field",
  },
  {
    name: "rex",
    kind: "command",
    from: "SPL",
    ours: "regex_extract",
    hint: "select(*, regex_extract(field, '...', 1) as name) reads a part of a field",
  },
  {
    name: "streamstats",
    kind: "command",
    from: "SPL",
    ours: "window",
    hint: WINDOW,
  },
  {
    name: "serialize",
    kind: "command",
    from: "KQL",
    ours: "window",
    hint: WINDOW,
  },
  // Functions.
  { name: "percentiles", kind: "function", from: "KQL", ours: "percentile", hint: PERCENTILE },
  { name: "perc95", kind: "function", from: "SPL", ours: "percentile", hint: PERCENTILE },
  { name: "p95", kind: "function", from: "SPL", ours: "percentile", hint: PERCENTILE },
  { name: "percentile_cont", kind: "function", from: "SQL", ours: "percentile", hint: PERCENTILE },
  { name: "quantile", kind: "function", from: "SQL", ours: "percentile", hint: PERCENTILE },
  { name: "prev", kind: "function", from: "KQL", ours: "lag", hint: WINDOW },
  { name: "next", kind: "function", from: "KQL", ours: "lead", hint: WINDOW },
  { name: "row_cumsum", kind: "function", from: "KQL", ours: "sum", hint: WINDOW },
  { name: "dc", kind: "function", from: "SPL", ours: "count_distinct", hint: "count_distinct(x)" },
  {
    name: "dcount",
    kind: "function",
    from: "KQL",
    ours: "count_distinct",
    hint: "count_distinct(x)",
  },
  {
    name: "distinct_count",
    kind: "function",
    from: "SPL",
    ours: "count_distinct",
    hint: "count_distinct(x)",
  },
  { name: "countif", kind: "function", from: "KQL", ours: "sum", hint: "sum(if(cond, 1, 0))" },
  { name: "mean", kind: "function", from: "SPL", ours: "avg", hint: "avg(x)" },
  {
    name: "values",
    kind: "function",
    from: "SPL",
    ours: "array_agg",
    hint: "array_agg(x) collects the values (duplicates kept)",
  },
  {
    name: "list",
    kind: "function",
    from: "SPL",
    ours: "array_agg",
    hint: "array_agg(x) collects the values",
  },
  {
    name: "make_list",
    kind: "function",
    from: "KQL",
    ours: "array_agg",
    hint: "array_agg(x) collects the values",
  },
  {
    name: "make_set",
    kind: "function",
    from: "KQL",
    ours: "array_agg",
    hint: "array_agg(x) collects the values (duplicates kept)",
  },
  {
    name: "collect_list",
    kind: "function",
    from: "SQL",
    ours: "array_agg",
    hint: "array_agg(x) collects the values",
  },
  {
    name: "earliest",
    kind: "function",
    from: "SPL",
    ours: "first",
    hint: "first(x) in input order, or min(time)",
  },
  {
    name: "latest",
    kind: "function",
    from: "SPL",
    ours: "last",
    hint: "last(x) in input order, or max(time)",
  },
  { name: "strlen", kind: "function", from: "KQL", ours: "len", hint: "len(s)" },
  { name: "length", kind: "function", from: "SQL", ours: "len", hint: "len(s)" },
  { name: "tolower", kind: "function", from: "KQL", ours: "lower", hint: "lower(s)" },
  { name: "toupper", kind: "function", from: "KQL", ours: "upper", hint: "upper(s)" },
  {
    name: "substring",
    kind: "function",
    from: "KQL, SQL",
    ours: "substr",
    hint: "substr(s, start [, length])",
  },
  { name: "isnull", kind: "function", from: "SPL, KQL", ours: null, hint: "x is null" },
  { name: "isnotnull", kind: "function", from: "SPL, KQL", ours: null, hint: "x is not null" },
  { name: "isempty", kind: "function", from: "KQL", ours: null, hint: "x is null or x = ''" },
  { name: "ifnull", kind: "function", from: "SQL", ours: "coalesce", hint: "coalesce(x, default)" },
  { name: "nvl", kind: "function", from: "SQL", ours: "coalesce", hint: "coalesce(x, default)" },
  { name: "iff", kind: "function", from: "KQL", ours: "if", hint: "if(cond, then, else)" },
  { name: "tostring", kind: "function", from: "KQL, SPL", ours: "STRING", hint: "STRING(x)" },
  { name: "toint", kind: "function", from: "KQL", ours: "INTEGER", hint: "INTEGER(x)" },
  { name: "tolong", kind: "function", from: "KQL", ours: "LONG", hint: "LONG(x)" },
  { name: "todouble", kind: "function", from: "KQL", ours: "DOUBLE", hint: "DOUBLE(x)" },
  {
    name: "tonumber",
    kind: "function",
    from: "SPL",
    ours: "DOUBLE",
    hint: "DOUBLE(x), or LONG(x)",
  },
  {
    name: "todatetime",
    kind: "function",
    from: "KQL",
    ours: "TIMESTAMP",
    hint: "TIMESTAMP(s [, format])",
  },
  {
    name: "strptime",
    kind: "function",
    from: "SPL",
    ours: "TIMESTAMP",
    hint: "TIMESTAMP(s, format)",
  },
  {
    name: "strftime",
    kind: "function",
    from: "SPL",
    ours: "format_time",
    hint: "format_time(time, 'yyyy-MM-dd HH:mm')",
  },
  {
    name: "format_datetime",
    kind: "function",
    from: "KQL",
    ours: "format_time",
    hint: "format_time(time, 'yyyy-MM-dd HH:mm')",
  },
  {
    name: "bin",
    kind: "function",
    from: "KQL, SPL",
    ours: "time_trunc",
    hint: "time_trunc(time, 1 hour) buckets times",
  },
];

const BY_KIND_AND_NAME = new Map(FOREIGN_NAMES.map((f) => [`${f.kind} ${f.name}`, f]));

/**
 * ` (did you mean 'filter'? where (SPL, KQL, SQL): filter(cond) ...)` for a name of another language, or
 * null when it is none.
 */
export function foreignHint(kind: "command" | "function", name: string): string | null {
  const found = BY_KIND_AND_NAME.get(`${kind} ${name.toLowerCase()}`);
  if (found === undefined) return null;
  const said = `${found.name} (${found.from}): ${found.hint}`;
  return found.ours === null ? ` (${said})` : ` (did you mean '${found.ours}'? ${said})`;
}
