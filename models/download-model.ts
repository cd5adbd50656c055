/**
 * Installs the default local model from the model hub (scripts/setup-model.sh runs it):
 * `tsx models/download-model.ts [catalog name]`. Progress goes to stderr; stdout gets one
 * line, the installed file, or on failure (exit 1) why it could not be had, for the script to
 * say before it falls back to the registry's small model.
 */
import { DownloadError } from "./download.js";
import { HubEnvSchema, installFromHub } from "./hub.js";
import {
  DEFAULT_LOCAL_MODEL,
  DEFAULT_MODEL_HUB,
  hubUrl,
  LOCAL_CATALOG,
  LocalEnvSchema,
  modelsDir,
} from "./local-spec.js";

function fail(reason: string): never {
  process.stdout.write(`${reason}\n`);
  process.exit(1);
}

const name = process.argv[2];
const model = name ? LOCAL_CATALOG.find((m) => m.name === name) : DEFAULT_LOCAL_MODEL;
if (!model) fail(`no catalog model named ${name}`);
const dir = modelsDir(LocalEnvSchema.parse(process.env));
if (dir === undefined) fail("no models directory: set TABLEMINDS_MODELS_DIR or HOME");
const parsed = HubEnvSchema.safeParse(process.env);
if (!parsed.success) fail("TABLEMINDS_MODEL_HUB is not an http(s) URL");
const hub = parsed.data.TABLEMINDS_MODEL_HUB ?? DEFAULT_MODEL_HUB;

const size = `${(model.bytes / 1e9).toFixed(1)} GB`;
const announce = (url: string) =>
  process.stderr.write(
    `tableminds: downloading the local model ${model.file} (${size}, ${model.license}) from ${url}\n`,
  );
try {
  const installed = await installFromHub(model, { dir, hub, onDownload: announce });
  process.stdout.write(`${installed.file}\n`);
} catch (error) {
  const reason = error instanceof DownloadError ? error.message : String(error);
  // The line above named the URL; the reason names its host only.
  fail(reason.replaceAll(hubUrl(model, hub), new URL(hub).host));
}
