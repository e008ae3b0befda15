/**
 * Writes src/schema.ts, the client's types, from the API's OpenAPI document as the server builds it from
 * its routes. Run after changing a route's schemas: `npx bun clients/typescript/scripts/generate.ts`;
 * test/openapi-tools.test.ts fails while the committed types differ from the served document's.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { apiRoutes } from "../../../src/http/apiRoutes.ts";
import { openapiDocumentOf } from "../../../src/http/openapi/document.ts";

const packageDir = join(import.meta.dir, "..");
const scratch = mkdtempSync(join(tmpdir(), "rollcall-client-"));
try {
  const documentPath = join(scratch, "openapi.json");
  writeFileSync(documentPath, JSON.stringify(openapiDocumentOf(apiRoutes)));
  const cli = join(dirname(Bun.resolveSync("openapi-typescript/package.json", packageDir)), "bin/cli.js");
  const generate = Bun.spawnSync(["node", cli, documentPath, "-o", join(packageDir, "src/schema.ts")], {
    stdout: "inherit",
    stderr: "inherit",
  });
  process.exitCode = generate.exitCode;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
