/**
 * Downloads the default local model into the models directory (scripts/setup-model.sh runs it
 * on machines that reach the model's URL): `tsx tools/models/download-model.ts`.
 */
import path from "node:path";
import { DownloadError, downloadFile } from "./download.js";
import { DEFAULT_LOCAL_MODEL, LocalEnvSchema, modelsDir } from "./local-spec.js";

const dir = modelsDir(LocalEnvSchema.parse(process.env));
if (dir === undefined) {
  process.stderr.write("tableminds: no models directory: set TABLEMINDS_MODELS_DIR or HOME\n");
  process.exit(1);
}
try {
  const result = await downloadFile({
    url: DEFAULT_LOCAL_MODEL.url,
    dest: path.join(dir, DEFAULT_LOCAL_MODEL.file),
    sha256: DEFAULT_LOCAL_MODEL.sha256,
  });
  process.stdout.write(`${result.file}\n`);
} catch (error) {
  const message = error instanceof DownloadError ? error.message : String(error);
  process.stderr.write(`tableminds: ${message}\n`);
  process.exit(1);
}
