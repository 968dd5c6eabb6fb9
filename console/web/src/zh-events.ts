// Simplified Chinese texts of the events pages, keyed by the English text.
export const zhEvents: Record<string, string> = {
};
