/** Host files as streams: moved to engine/fs/open_file.ts (the tree on the local disk uses it). */

export { openFile } from "../../engine/fs/open_file.ts";
