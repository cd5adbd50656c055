/** Types of scripts/source-stamp.mjs, for the TypeScript that imports it. */
export declare const CHECKOUT_BUILD: string;
export declare function runtimeFolders(root: string): string[];
/** Every file under `folder` (relative to `root`), but caches and hidden files. */
export declare function files(root: string, folder: string): Generator<string>;
export declare function sourceStamp(root: string): string;
export declare function stampFile(root: string): string;
export declare function freshBuild(root: string, entry?: string): string | undefined;
