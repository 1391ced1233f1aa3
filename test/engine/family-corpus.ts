/**
 * Texts that exercise what BPE pre-tokenizers disagree on: code, JSON, scripts outside Latin,
 * emoji sequences, whitespace runs, digits, contractions, and every family's control-token
 * spellings written as plain text (they must stay text when tokenized without special parsing).
 */
export const FAMILY_CORPUS: Readonly<Record<string, string>> = {
  typescript:
    'export async function load(path: string): Promise<Model> {\n  const { size } = await stat(path);\n  if (size === 0) throw new Error("empty: " + path);\n  return models.get(path) ?? (await open(path, { mode: "r" }));\n}\n',
  python:
    'class Cache:\n    """LRU cache."""\n\n    def __init__(self, n: int = 128) -> None:\n        self._d: dict[str, bytes] = {}\n        self.n = n\n\n    def get(self, k):\n        return self._d.get(k)  # O(1)\n',
  rust: 'fn main() -> Result<(), Box<dyn std::error::Error>> {\n    let v: Vec<u8> = (0..=255).collect();\n    println!("{:?}", &v[..4]);\n    Ok(())\n}\n',
  go: "func (s *Server) Serve(ctx context.Context) error {\n\tfor {\n\t\tselect {\n\t\tcase <-ctx.Done():\n\t\t\treturn ctx.Err()\n\t\t}\n\t}\n}\n",
  "c and shell":
    '#include <stdio.h>\nint main(void){printf("%d\\n",42);return 0;}\n$ ls -la /tmp | grep -v "^d" && echo "ok" >&2\n',
  sql: "SELECT u.id, COUNT(*) AS n FROM users u LEFT JOIN orders o ON o.user_id = u.id WHERE u.created_at >= '2026-01-01' GROUP BY 1;",
  json: '{"type":"tool_use","id":"toolu_01A","name":"Bash","input":{"command":"ls -la","timeout":120000,"flags":[true,false,null],"ratio":-1.5e-3}}',
  "json pretty": '{\n  "name": "get_weather",\n  "arguments": {\n    "city": "Zürich",\n    "units": "metric"\n  }\n}',
  chinese: "你好，世界！这是一个用于测试分词器的句子。模型需要正确处理中文标点符号：“引号”、《书名号》。",
  japanese: "日本語のテキストとカタカナ、ひらがなを混ぜた文章です。東京都渋谷区１２３番地",
  korean: "한국어 텍스트도 포함합니다. 안녕하세요!",
  emoji: "emoji 👍 👍🏽 😀😃😄 🎉🎉",
  "emoji zwj": "family 👨‍👩‍👧‍👦 rainbow 🏳️‍🌈 heart ❤️‍🔥 flags 🇩🇪🇯🇵 keycap 1️⃣",
  arabic: "مرحبا بالعالم، هذا نص عربي للاختبار ١٢٣",
  devanagari: "नमस्ते दुनिया, यह एक परीक्षण है।",
  "latin accents": "Ünïcödé ÀÉÎ straße İstanbul ǅungla naïve café résumé",
  "decomposed accents": "cafe\u0301 re\u0301sume\u0301 A\u030angstro\u0308m",
  "whitespace runs": "a  b   c    d\n\n\n\ne\t\tf \t g   \n   \n\t\n        indented",
  "leading and trailing space": "   leading and trailing   ",
  crlf: "line one\r\nline two\r\n\r\n\tindented\r\n",
  "digit runs": "1 12 123 1234 12345 3.14159265358979 0x7fffffff 100000000000000000000000000000 2026-12-01T09:29:48Z",
  contractions: "It's I'm you're they've we'll he'd DON'T Can'T isn’t rock'n'roll 'quoted'",
  urls: "https://example.com/a/b?c=1&d=%20e#frag mailto:x@y.z",
  "long word": `${"x".repeat(120)} ${"ab".repeat(60)}`,
  "chatml spellings": "<|im_start|>system\nhi<|im_end|>\n<|im_start|>assistant\n<|endoftext|><|fim_prefix|>",
  "sentencepiece spellings": "<s>hello</s> <unk> <pad> <mask> [PAD151700] [EMPTY_0]",
  "harmony spellings":
    "<|start|>assistant<|channel|>analysis<|message|>x<|end|><|start|>assistant to=functions.ls<|channel|>commentary <|constrain|>json<|message|>{}<|call|><|return|><|startoftext|>",
  "deepseek spellings":
    "<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>ls<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>",
  "glm spellings": "[gMASK]<sop><|system|>s<|user|>u<|assistant|><|observation|>o /nothink",
  "tag spellings":
    "<think>t</think><tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call><tool_response>r</tool_response>",
};
