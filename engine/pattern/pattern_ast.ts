/** The parsed form of a PARSE pattern (LANGUAGE.md section 6); offsets index the pattern text. */

export type MatcherName =
  | "INT"
  | "LONG"
  | "DOUBLE"
  | "BOOL"
  | "WORD"
  | "NSPACE"
  | "LD"
  | "JAVANAME"
  | "HOSTPORT"
  | "IPLIST"
  | "EPOCH"
  | "EPOCHMS"
  | "DATA"
  | "DQS"
  | "IPV4"
  | "IPV6"
  | "IPADDR"
  | "HTTPDATE"
  | "SYSLOGTIME"
  | "SYSLOG5424"
  | "ISO8601"
  | "TIMESTAMP"
  | "JSON"
  | "KVP"
  | "SPACE"
  | "EOL"
  | "REGEX";

export type PatternElement =
  | {
    readonly kind: "literal";
    readonly text: string;
    readonly optional: boolean;
    readonly offset: number;
  }
  | {
    readonly kind: "matcher";
    readonly matcher: MatcherName;
    /** The quoted argument of `TIMESTAMP('...')` and `REGEX('...')`. */
    readonly argument: string | null;
    readonly argumentOffset: number;
    readonly name: string | null;
    readonly optional: boolean;
    readonly offset: number;
    /**
     * Set by optional_parts.ts on an LD or DATA that must run to the end of the line (of the
     * record, for DATA): the pattern's end, with only absent optional parts after it.
     */
    readonly toEnd?: true;
  }
  | {
    readonly kind: "choice";
    readonly alternatives: readonly (readonly PatternElement[])[];
    readonly optional: boolean;
    readonly offset: number;
    /**
     * Set by optional_parts.ts: the alternatives are two readings of the same elements (an
     * optional part present, then absent), so its fields are nullable only as they were.
     */
    readonly split?: true;
  };

/** A mistake in a pattern: what is wrong, and where in the pattern text (0-based). */
export interface PatternError {
  readonly message: string;
  readonly offset: number;
}
