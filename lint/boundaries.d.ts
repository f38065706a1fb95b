import type { ESLint } from 'eslint';
export function unitOf(path: string): string;
export function forbidden(from: string, to: string): string | undefined;
export const boundaries: ESLint.Plugin;
