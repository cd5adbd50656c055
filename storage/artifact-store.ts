import { deploymentSettings } from "../settings/deployment.js";

/*
 * Where table bytes are kept beyond this machine's artifact folder. Readers only ever open files
 * of the folder (artifactDir(), storage/artifacts.ts); the store is where a file put into the
 * folder is shared from, and where one missing from it is fetched from. Its names are the
 * folder's relative names, `<sha256>.<ext>` and `uploads/<sha256><ext>`: content-addressed, so
 * one name always holds the same bytes and nothing is ever overwritten.
 *
 * Two backends: the folder alone (the default: one machine, nothing beyond it), and any
 * S3-compatible object store (TABLEMINDS_ARTIFACT_STORE=s3://bucket[/prefix],
 * storage/artifact-store-s3.ts), where the folder becomes a local cache by hash.
 */

export interface ArtifactStore {
  /** Where `name` is kept, for messages: `s3://bucket/prefix/<name>`, or the folder's name. */
  where(name: string): string;
  /**
   * Makes the finished `file` (whose bytes are those `name` says) fetchable as `name` by any
   * machine; resolves once it is. `check` asks first whether the store has it already, for a
   * file that was in the folder before (its bytes are then not sent again).
   */
  put(file: string, name: string, opts?: { check?: boolean }): Promise<void>;
  /**
   * Writes the bytes kept as `name` to `target` (a new file, its folder made when missing) and
   * returns their sha256, or null when the store has no such name. The caller checks the
   * digest against the name before it uses the file.
   */
  fetch(name: string, target: string): Promise<string | null>;
}

/** The local folder alone: what is in it is stored, and there is nowhere else to look. */
export const localFolderStore: ArtifactStore = {
  where: (name) => `the local artifact folder's ${name}`,
  put: async () => {},
  fetch: async () => null,
};

let current: { setting: string; store: Promise<ArtifactStore> } | undefined;

/**
 * The store TABLEMINDS_ARTIFACT_STORE names (deploymentSettings()), made once per setting;
 * the local folder alone when it is unset. The S3 client is only loaded when one is set.
 */
export function artifactStore(env: NodeJS.ProcessEnv = process.env): Promise<ArtifactStore> {
  const url = deploymentSettings(env).TABLEMINDS_ARTIFACT_STORE;
  if (url === undefined) return Promise.resolve(localFolderStore);
  // The client reads the AWS_* settings when made: a change of them makes another.
  const setting = JSON.stringify([
    url,
    env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL,
    env.AWS_REGION,
    env.AWS_ACCESS_KEY_ID,
  ]);
  if (current?.setting !== setting) {
    const store = import("./artifact-store-s3.js").then(({ S3ArtifactStore }) =>
      S3ArtifactStore.fromUrl(url, env),
    );
    current = { setting, store };
  }
  return current.store;
}
