/*
 * What a model, a table or generated code wrote may hold terminal escape sequences: an OSC that
 * retitles the window (`ESC ] 0 ; ... BEL`), a CSI that moves the cursor or clears the screen, a
 * carriage return that overwrites a line. Everything the CLI prints from them goes through here.
 */

/** Control characters but newline and tab: C0, DEL and C1 (U+0080-U+009F, CSI among them). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const hex = (c: string, width: number) => c.charCodeAt(0).toString(16).padStart(width, "0");

/** Text for a terminal: each control character shown as a visible escape (`\x1b`), not obeyed. */
export function terminalText(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${hex(c, 2)}`);
}

/** JSON for a terminal: JSON.stringify leaves DEL and C1 characters raw; they are escaped too. */
export function terminalJson(json: string): string {
  return json.replace(/[\u007f-\u009f]/g, (c) => `\\u${hex(c, 4)}`);
}
