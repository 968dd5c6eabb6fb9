// Simplified Chinese texts of the approval pages, keyed by the English text.
export const zhApproval: Record<string, string> = {
};
