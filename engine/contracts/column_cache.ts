/**
 * The column cache's settings as plain data (they cross to the scan workers in ShareTask): where
 * its entries live and how large it may grow. The cache itself is engine/fs/column_cache.ts; the
 * scan that fills and reads it is engine/exec/cached_scan.ts.
 */

export interface ColumnCacheConfig {
  /** `<home>/engine_data/cache`: one folder per entry (a file's identity and a source's spec). */
  readonly dir: string;
  /** The entries' bytes above which the least recently used entries are removed. */
  readonly maxBytes: number;
  /** Bytes of a file per block (a block's lines start in one such range): 4 MiB by default. */
  readonly blockBytes?: number;
  /**
   * Writes a block's temporary file (Deno.writeFile by default); in the query's own thread
   * only, never sent to a worker (tests inject a full disk here).
   */
  readonly writeFile?: (path: string, bytes: Uint8Array) => Promise<void>;
}

/** ColumnCacheConfig.blockBytes by default. */
export const CACHE_BLOCK_BYTES = 4 << 20;
