/**
 * `path_field: '_path'` on a source of files (PARSE, READ_JSON, READ_CSV, READ_W3C,
 * READ_ZEEK): each row also carries the URI of the file it was read from (a tree path as the
 * user wrote it, `file://`, `azblob://` or `cloudapi://`), in a field of that name. Asked for
 * explicitly, so a query that does not ask pays nothing: the source is then read one file at a
 * time (the inner source is opened on each file alone, in the query's thread), and its warnings
 * are said once for the whole source as without the field: the skip counts of the files added
 * up, the fields none of the files had.
 */

import type { FileEntry } from "../contracts/datastore.ts";
import type { OpenSource, SourceRead } from "../plan/plan.ts";
import type { BatchStream, ExecContext } from "../plan/context.ts";
import type { Warning } from "../contracts/datastore.ts";
import { type SkipTally, skipWarning, type TallyWarning } from "../plan/skip_tally.ts";
import { warnAbsentFields } from "./absent_fields.ts";

type Files = (ctx: ExecContext) => AsyncIterable<FileEntry>;

/**
 * The files of a source, and the way to open its inner source on one of them: `files` gives
 * the one file of a context made by `onFile`, else every file of `list`.
 */
export function filesOneAtATime(list: Files): {
  files: Files;
  onFile: (ctx: ExecContext, file: FileEntry) => ExecContext;
} {
  const single = new WeakMap<object, FileEntry>();
  const files: Files = (ctx) => {
    const file = single.get(ctx);
    if (file) return one(file);
    // A scan that listed the files already (to share them) keeps its listing under its own
    // `list`, which is this function: the inner lister knows only itself, and would list again
    // (every listing warning twice).
    const listed = ctx.listed?.get(files);
    return listed ? fromArray(listed) : list(ctx);
  };
  return {
    files,
    onFile: (ctx, file) => {
      const own: ExecContext = { ...ctx };
      single.set(own, file);
      return own;
    },
  };
}

async function* one(file: FileEntry): AsyncGenerator<FileEntry> {
  yield file;
}

async function* fromArray(files: readonly FileEntry[]): AsyncGenerator<FileEntry> {
  yield* files;
}

/**
 * The source `inner` with the field `name` added to every row: the file's URI. `open` for a
 * source whose fields are known only from the data (its warning of fields no record had is
 * said here, once, for all the files).
 */
export function withPathField(
  inner: OpenSource,
  list: Files,
  onFile: (ctx: ExecContext, file: FileEntry) => ExecContext,
  name: string,
  source: { readonly label: string; readonly open: boolean },
): OpenSource {
  return (ctx, read) => {
    const fields = read.fields === null ? null : read.fields.filter((f) => f !== name);
    const innerRead: SourceRead = {
      fields: source.open ? null : fields === null ? null : [...fields],
      filter: null,
    };
    // Each file's own skip warning is held, and one is said for the source at the end.
    const tallies = new Map<string, { first: Warning; tally: SkipTally; files: number }>();
    // The rows are given a field here: none is folded or written below without it.
    const { direct: _direct, rendered: _rendered, ...plain } = ctx;
    const quiet: ExecContext = {
      ...plain,
      warn: (w) => {
        const tally = (w as Partial<TallyWarning>).tally;
        if (!tally) return ctx.warn(w);
        const seen = tallies.get(tally.kind);
        if (!seen) tallies.set(tally.kind, { first: w, tally, files: 1 });
        else {
          seen.tally = { ...seen.tally, count: seen.tally.count + tally.count };
          seen.files++;
        }
      },
    };
    async function* rows(): BatchStream {
      for await (const file of list(ctx)) {
        for await (const batch of inner(onFile(quiet, file), innerRead)) {
          yield batch.map((row) => ({ ...row, [name]: file.uri }));
        }
      }
      for (const { first, tally, files } of tallies.values()) {
        ctx.warn(files === 1 ? first : skipWarning(tally));
      }
    }
    return source.open && fields !== null
      ? warnAbsentFields(source.label, fields, undefined, ctx, () => rows())
      : rows();
  };
}
