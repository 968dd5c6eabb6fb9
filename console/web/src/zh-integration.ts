// Simplified Chinese texts of the integration pages, keyed by the English text.
export const zhIntegration: Record<string, string> = {
};
