/** Test fixture: a real client's freeform tool grammar. */

/** The grammar Codex CLI 0.169 sends for its freeform apply_patch tool (read from its binary). */
export const APPLY_PATCH_LARK = `start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
`;

/** The `custom` tool's input schema as the edge offers it. */
/** The grammar of Codex CLI 0.171's code-mode `exec` tool (namespace `functions`, its default model; captured). */
export const CODEX_EXEC_LARK = `
start: pragma_source | plain_source
pragma_source: PRAGMA_LINE NEWLINE SOURCE
plain_source: SOURCE

PRAGMA_LINE: /[ \\t]*\\/\\/ @exec:[^\\r\\n]*/
NEWLINE: /\\r?\\n/
SOURCE: /[\\s\\S]+/
`;

export const CUSTOM_SCHEMA = JSON.stringify({
  type: "object",
  properties: { input: { type: "string" } },
  required: ["input"],
  additionalProperties: false,
});
