/**
 * A signature and a one-line description of each command, source, function and PARSE matcher,
 * for editors (`GET /language`: the console shows them in completion and on hover). The full
 * reference is docs/language.md; language_help_test.ts checks that every word of the engine's
 * catalogues has an entry here, and that a function's signature takes as many arguments as the
 * checker allows.
 */

/** Signature, then description, by name. */
type Entries = Readonly<Record<string, readonly [string, string]>>;

export const COMMAND_HELP: Entries = {
  select: ["select(expr [as name], ...)", "Keeps, computes and names columns; * keeps all."],
  group: ["group(key, ...)", "Computes the preceding select's aggregates per distinct key."],
  filter: ["filter(cond)", "Keeps the rows where cond is true (null counts as false)."],
  filter_out: ["filter_out(cond)", "Drops the rows where cond is true (null counts as false)."],
  sort: ["sort(expr [asc|desc], ...)", "Stable sort by the keys; nulls last."],
  limit: ["limit(n [, offset])", "At most n rows, after skipping offset."],
  join: ["join(@other on left.a = right.b)", "Inner equi-join with another stream."],
  leftjoin: [
    "leftjoin(@other on left.a = right.b)",
    "Equi-join keeping left rows without a match (right fields null).",
  ],
  union: ["union(@a, @b, ...)", "Appends streams; fields matched by name, types widened."],
  unnest: ["unnest(array_field [as name])", "One row per element of the array."],
  leftunnest: [
    "leftunnest(array_field [as name])",
    "As unnest, keeping a row whose array is null or empty once.",
  ],
  window: [
    "window(expr as name, ..., by: key, ..., order: key [desc], ...)",
    "Adds values computed over each row's group in order (lag, row_number, running sums).",
  ],
  save: ["save(path)", "Writes the rows to a stored table (.sxt) and passes them on."],
};

export const SOURCE_HELP: Entries = {
  LIST: ["LIST(src: uri)", "One row per matched file: uri, size, modified, path_time."],
  PARSE: ["PARSE(pattern: p, src: uri)", "Records parsed from text files by a pattern."],
  READ_JSON: ["READ_JSON(src: uri)", "One row per JSON object (JSON lines or an array)."],
  READ_CSV: [
    "READ_CSV(src: uri, delimiter: ',', header: true, quote: '\"')",
    "One row per CSV record.",
  ],
  READ_W3C: ["READ_W3C(src: uri)", "One row per line of a W3C extended log (IIS)."],
  READ_ZEEK: ["READ_ZEEK(src: uri)", "One row per line of a Zeek TSV log, typed by its header."],
  VALUES: ["VALUES((a: 1, b: 'x'), ...)", "Inline rows, for tests and small lookups."],
};

export const FUNCTION_HELP: Entries = {
  count: ["count(* | x)", "Aggregate: the rows, or the non-null values of x (LONG)."],
  count_distinct: ["count_distinct(x)", "Aggregate: the distinct non-null values of x (LONG)."],
  sum: ["sum(x)", "Aggregate: the sum of the non-null values."],
  min: ["min(x)", "Aggregate: the smallest non-null value."],
  max: ["max(x)", "Aggregate: the largest non-null value."],
  avg: ["avg(x)", "Aggregate: the mean of the non-null values (DOUBLE)."],
  first: ["first(x)", "Aggregate: the first non-null value in input order."],
  last: ["last(x)", "Aggregate: the last non-null value in input order."],
  percentile: ["percentile(x, p)", "Aggregate: the exact p-th quantile, p a fraction (0.95)."],
  median: ["median(x)", "Aggregate: percentile(x, 0.5)."],
  array_agg: ["array_agg(x)", "Aggregate: an ARRAY of the non-null values, in input order."],
  row_number: ["row_number()", "Window: the row's position in its group, from 1."],
  rank: ["rank()", "Window: the rank by the order keys; ties share it, then it skips."],
  dense_rank: ["dense_rank()", "Window: the rank by the order keys, without gaps."],
  lag: ["lag(x [, n])", "Window: x of the row n (default 1) before in its group."],
  lead: ["lead(x [, n])", "Window: x of the row n (default 1) after in its group."],
  lower: ["lower(s)", "The string in lower case."],
  upper: ["upper(s)", "The string in upper case."],
  len: ["len(s)", "The characters of a string, or the elements of an array."],
  substr: ["substr(s, start [, len])", "Part of a string, start counted from 1."],
  trim: ["trim(s)", "The string without white space at either end."],
  contains: ["contains(s, t)", "Whether s contains t."],
  starts_with: ["starts_with(s, t)", "Whether s starts with t."],
  ends_with: ["ends_with(s, t)", "Whether s ends with t."],
  replace: ["replace(s, from, to)", "s with every occurrence of from replaced by to."],
  split: ["split(s, sep)", "The parts of s between the separators, as an ARRAY."],
  concat: ["concat(a [, b, ...])", "The values as strings, one after the other; nulls skipped."],
  regex_extract: [
    "regex_extract(s, 're' [, group])",
    "The match of a regular expression (or its group); null when none.",
  ],
  regex_replace: [
    "regex_replace(s, 're', replacement)",
    "s with every match replaced ($1 a group, $& the match).",
  ],
  now: ["now()", "The query's start, the same in every row."],
  t: ["T(s)", "A timestamp from text; without a zone, in the query's time zone."],
  time_trunc: [
    "time_trunc(ts, interval | 'month')",
    "The timestamp rounded down to the interval or calendar unit.",
  ],
  format_time: ["format_time(ts, 'yyyy-MM-dd HH:mm' [, zone])", "The timestamp as text."],
  hour: ["hour(ts)", "The hour (0-23) in the query's time zone."],
  day: ["day(ts)", "The day of the month in the query's time zone."],
  ip: ["IP(s)", "An IP address (v4 or v6) from text; null when it is not one."],
  net: ["NET(s)", "A network from text such as '10.0.0.0/8'."],
  ip_trunc: ["ip_trunc(ip, bits)", "The address with all but its first bits cleared."],
  integer: ["INTEGER(x)", "x as a 32-bit integer; null when it is not one."],
  long: ["LONG(x)", "x as a 64-bit integer; null when it is not one."],
  double: ["DOUBLE(x)", "x as a floating-point number; null when it is not one."],
  string: ["STRING(x)", "x as text."],
  boolean: ["BOOLEAN(x)", "x as true or false; null when it is neither."],
  timestamp: [
    "TIMESTAMP(s [, format])",
    "A timestamp from text in a format, or from a number of ms (or 's', 'us', 'ns').",
  ],
  coalesce: ["coalesce(a [, b, ...])", "The first value that is not null."],
  if: ["if(cond, a, b)", "a when cond is true, else b."],
};

export const MATCHER_HELP: Entries = {
  INT: ["INT", "An integer (INTEGER)."],
  LONG: ["LONG", "An integer (LONG)."],
  DOUBLE: ["DOUBLE", "A number with a fraction or an exponent (DOUBLE)."],
  BOOL: ["BOOL", "true or false (BOOLEAN)."],
  WORD: ["WORD", "Letters, digits and _ (STRING)."],
  NSPACE: ["NSPACE", "A run of characters other than white space (STRING)."],
  LD: ["LD", "Any characters, as few as possible, up to what follows (STRING)."],
  JAVANAME: ["JAVANAME", "Letters, digits, _, $ and . as in Java class names (STRING)."],
  HOSTPORT: ["HOSTPORT", "host:port, [v6]:port (TUPLE host, port)."],
  IPLIST: ["IPLIST", "Addresses separated by commas, as X-Forwarded-For (ARRAY of IPADDR)."],
  EPOCH: ["EPOCH", "Seconds since 1970, with a fraction (TIMESTAMP)."],
  EPOCHMS: ["EPOCHMS", "Milliseconds since 1970 (TIMESTAMP)."],
  DATA: ["DATA", "Any text, line breaks included; only with record_start (STRING)."],
  DQS: ["DQS", "A double-quoted string, unescaped (STRING)."],
  IPV4: ["IPV4", "An IPv4 address (IPADDR)."],
  IPV6: ["IPV6", "An IPv6 address (IPADDR)."],
  IPADDR: ["IPADDR", "An IPv4 or IPv6 address (IPADDR)."],
  HTTPDATE: ["HTTPDATE", "10/Oct/2024:13:55:36 +0000, as web server logs write (TIMESTAMP)."],
  SYSLOGTIME: ["SYSLOGTIME", "Jul  1 09:10:11, BSD syslog's time without a year (TIMESTAMP)."],
  SYSLOG5424: ["SYSLOG5424", "2024-10-11T22:14:15.003Z of RFC 5424, - for none (TIMESTAMP)."],
  ISO8601: ["ISO8601", "2024-10-10T13:55:36.123Z (TIMESTAMP)."],
  TIMESTAMP: ["TIMESTAMP('yyyy-MM-dd HH:mm:ss.SSS')", "A timestamp in that form (TIMESTAMP)."],
  JSON: ["JSON", "A balanced JSON object or array (TUPLE or ARRAY)."],
  KVP: ["KVP [(',')]", "key=value pairs, optionally with a separator (TUPLE of STRING)."],
  SPACE: ["SPACE", "White space."],
  EOL: ["EOL", "The end of a line."],
  REGEX: ["REGEX('...')", "A regular expression, as an escape hatch (STRING)."],
};
