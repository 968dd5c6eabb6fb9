package mcp

import (
	"context"
	_ "embed"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// NamingMaster is the name of the built-in prompt (wire-runtime §4).
const NamingMaster = "naming-master"

//go:embed prompts/naming-master.md
var namingGuide string

// namingMasterPrompt describes the built-in naming prompt; it takes no arguments.
func namingMasterPrompt() *sdk.Prompt {
	return &sdk.Prompt{
		Name:        NamingMaster,
		Title:       "Naming master",
		Description: "A guide for naming code identifiers and database objects (tables, columns, constraints, indexes).",
	}
}

// namingMaster answers prompts/get with one user message holding the guide (wire-runtime §4).
func namingMaster(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	return &sdk.GetPromptResult{
		Description: "Naming guide for code identifiers and database objects",
		Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: namingGuide}}},
	}, nil
}
