/**
 * A deterministic byte-level BPE vocabulary for generated test models: 256 byte tokens,
 * merges of common English/code fragments built only from tokens that already exist
 * (so every merge is valid and ranks are consistent), then the control tokens.
 */
import { BYTE_TO_CHAR, textToByteChars } from "./byte-unicode.ts";
import { GgufTokenType } from "./gguf-format.ts";

/** Control tokens (GGUF token_type 3) appended after the merged tokens, in this order. */
export const CONTROL_TOKENS = [
  "<|endoftext|>",
  "<|im_start|>",
  "<|im_end|>",
  "<｜begin▁of▁sentence｜>",
  "<｜end▁of▁sentence｜>",
  "<｜User｜>",
  "<｜Assistant｜>",
] as const;

const TOKEN_TYPE_NORMAL = GgufTokenType.NORMAL;
const TOKEN_TYPE_CONTROL = GgufTokenType.CONTROL;

export interface Vocab {
  tokens: string[];
  tokenTypes: number[];
  merges: string[];
  /** Token id of each control token text. */
  control: ReadonlyMap<string, number>;
}

const BIGRAMS =
  "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa ef cu rn sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck ew mu br bi pt ak pu ui rg ib tl ny ki rk ys ob mm fu ph og ms ye ud mb ip ub oi rl gu dr hr cc tw ft wn nu";

const WORDS =
  "the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three upon house use during without again place around however home small found mrs thought went say part once high general upon every public number think system function return const let var import export class type interface true false null undefined string value data error request response result message model token tokens text json content role user assistant tool input output";

const CODE_FRAGMENTS = [
  "  ",
  "    ",
  "        ",
  "\n\n",
  "\n  ",
  "\n    ",
  "\t\t",
  '{"',
  '":',
  '",',
  '"}',
  "()",
  "();",
  "{}",
  "[]",
  "=>",
  "==",
  "===",
  "!=",
  "//",
  "/*",
  "*/",
  "->",
  "::",
  ", ",
  ". ",
  ": ",
  "; ",
  "\n}",
  "\n\n\n",
  "00",
  "10",
  "20",
  "19",
  "200",
  "2000",
];

function* candidates(): Generator<string> {
  for (const f of CODE_FRAGMENTS) yield f;
  for (let c = 97; c <= 122; c++) yield ` ${String.fromCharCode(c)}`;
  for (const b of BIGRAMS.split(" ")) yield b;
  for (let c = 65; c <= 90; c++) yield ` ${String.fromCharCode(c)}`;
  for (const w of WORDS.split(" ")) {
    yield ` ${w}`;
    yield w;
    yield ` ${w.charAt(0).toUpperCase()}${w.slice(1)}`;
  }
  // Fill: every lowercase letter pair, then space + pair, then pair + letter, in a fixed order.
  const letters = "etaoinshrdlcumwfgypbvkjxqz";
  for (const a of letters) for (const b of letters) yield a + b;
  for (const a of letters) for (const b of letters) yield ` ${a}${b}`;
  for (const a of letters) for (const b of letters) for (const c of letters) yield a + b + c;
}

/** Build a vocabulary of exactly `size` tokens. */
export function buildVocab(size: number): Vocab {
  const mergeBudget = size - 256 - CONTROL_TOKENS.length;
  if (mergeBudget < 0)
    throw new RangeError(`vocab size ${size} is smaller than 256 bytes + ${CONTROL_TOKENS.length} control tokens`);
  const tokens: string[] = [...BYTE_TO_CHAR];
  const known = new Set(tokens);
  const merges: string[] = [];

  const addMerge = (a: string, b: string): boolean => {
    if (merges.length >= mergeBudget) return false;
    merges.push(`${a} ${b}`);
    tokens.push(a + b);
    known.add(a + b);
    return true;
  };
  // Make `w` a token: split into two known parts (longest left part first), else build its prefix.
  const ensure = (w: string): boolean => {
    if (known.has(w)) return true;
    for (let i = w.length - 1; i >= 1; i--) {
      if (known.has(w.slice(0, i)) && known.has(w.slice(i))) return addMerge(w.slice(0, i), w.slice(i));
    }
    const prefix = w.slice(0, -1);
    return ensure(prefix) && addMerge(prefix, w.slice(-1));
  };

  for (const text of candidates()) {
    if (merges.length >= mergeBudget) break;
    ensure(textToByteChars(text));
  }
  if (merges.length < mergeBudget)
    throw new RangeError(`vocab size ${size} needs more merges than the generator provides`);

  const tokenTypes: number[] = tokens.map(() => TOKEN_TYPE_NORMAL);
  const control = new Map<string, number>();
  for (const text of CONTROL_TOKENS) {
    control.set(text, tokens.length);
    tokens.push(text);
    tokenTypes.push(TOKEN_TYPE_CONTROL);
  }
  return { tokens, tokenTypes, merges, control };
}
