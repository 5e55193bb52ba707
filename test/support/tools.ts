/**
 * Debian tools some tests use as independent checkers (xmlsec1, xmllint, pdftoppm, pdftotext).
 * `.ci/run` installs them; where one cannot exist, the test that needs it says it is skipped.
 */
import { spawnSync } from "node:child_process"

/** Whether `tool` is on the PATH. */
export const hasTool = (tool: string): boolean => spawnSync("sh", ["-c", `command -v "$1"`, "sh", tool]).status === 0
