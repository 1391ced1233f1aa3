/** Constants of the GGUF container format shared by the writer and the validator. */

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_VERSION = 3;
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** GGUF metadata value types. */
export const GgufValueType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;
export type GgufValueType = (typeof GgufValueType)[keyof typeof GgufValueType];

/** Byte width of fixed-size scalar value types. */
export const SCALAR_SIZE: Readonly<Record<number, number>> = {
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  10: 8,
  11: 8,
  12: 8,
};

/** `tokenizer.ggml.token_type` values (llama.cpp's llama_token_type). */
export const GgufTokenType = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

/** Tensor element types used by the writer. */
export const GgmlType = { F32: 0, F16: 1 } as const;

/**
 * ggml tensor types: [elements per block, bytes per block]. Types missing here (new or removed
 * ones) cannot be size-checked; the validator then checks only that their offset lies in the file.
 */
export const GGML_TYPE_LAYOUT: ReadonlyMap<number, readonly [number, number]> = new Map([
  [0, [1, 4]], // F32
  [1, [1, 2]], // F16
  [2, [32, 18]], // Q4_0
  [3, [32, 20]], // Q4_1
  [6, [32, 22]], // Q5_0
  [7, [32, 24]], // Q5_1
  [8, [32, 34]], // Q8_0
  [9, [32, 36]], // Q8_1
  [10, [256, 84]], // Q2_K
  [11, [256, 110]], // Q3_K
  [12, [256, 144]], // Q4_K
  [13, [256, 176]], // Q5_K
  [14, [256, 210]], // Q6_K
  [15, [256, 292]], // Q8_K
  [16, [256, 66]], // IQ2_XXS
  [17, [256, 74]], // IQ2_XS
  [18, [256, 98]], // IQ3_XXS
  [19, [256, 50]], // IQ1_S
  [20, [32, 18]], // IQ4_NL
  [21, [256, 110]], // IQ3_S
  [22, [256, 82]], // IQ2_S
  [23, [256, 136]], // IQ4_XS
  [24, [1, 1]], // I8
  [25, [1, 2]], // I16
  [26, [1, 4]], // I32
  [27, [1, 8]], // I64
  [28, [1, 8]], // F64
  [29, [256, 56]], // IQ1_M
  [30, [1, 2]], // BF16
  [34, [256, 54]], // TQ1_0
  [35, [256, 66]], // TQ2_0
  [39, [32, 17]], // MXFP4
]);

/** Round `n` up to a multiple of `alignment`. */
export function alignUp(n: number, alignment: number): number {
  return Math.ceil(n / alignment) * alignment;
}
