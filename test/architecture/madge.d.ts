declare module 'madge' {
  interface MadgeResult {
    /** Each file (relative to the base directory) and the files it imports. */
    obj(): Record<string, string[]>;
    circular(): string[][];
  }
  interface MadgeConfig {
    fileExtensions?: string[];
    tsConfig?: string;
    excludeRegExp?: RegExp[];
    baseDir?: string;
    /** Per-language detective settings, e.g. `{ ts: { skipTypeImports: true } }`: type-only imports left out. */
    detectiveOptions?: Record<string, Record<string, unknown>>;
  }
  export default function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeResult>;
}
