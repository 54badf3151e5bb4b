/** For tests: the tree's file operations on host paths (what the files tree uses). */

export { fsTreeFiles as hostFiles } from "../../home/resource_files.ts";
