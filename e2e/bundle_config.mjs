// The command, arguments and environment an MCPB host derives from a bundle's manifest,
// computed by the official @anthropic-ai/mcpb library (the code hosts use), so the bundle
// test starts the server exactly as a host would.
// Usage: node bundle_config.mjs UNPACKED_DIR USER_CONFIG_JSON
import { readFileSync } from "node:fs";
import { join, sep } from "node:path";
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";

const [dir, userConfigJson] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: dir,
  systemDirs: { HOME: process.env.HOME ?? "", DESKTOP: "", DOCUMENTS: "" },
  userConfig: JSON.parse(userConfigJson),
  pathSeparator: sep,
});
process.stdout.write(JSON.stringify(config ?? null));
