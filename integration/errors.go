package integration

import (
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// Business codes of the integration module (wire-integration §12). All answer HTTP 200 but
// 2622 (401), 2623 (501) and 2630 (503).
const (
	ErrCodeContractNotFound      = 2600
	ErrCodeContractDisabled      = 2601
	ErrCodeSystemNotFound        = 2602
	ErrCodeSystemDisabled        = 2603
	ErrCodeAdapterNotFound       = 2604
	ErrCodeAdapterDisabled       = 2605
	ErrCodeRouteNotFound         = 2606
	ErrCodeTargetAmbiguous       = 2607
	ErrCodeInputInvalid          = 2608
	ErrCodeOutputInvalid         = 2609
	ErrCodeUpstreamFailed        = 2610
	ErrCodeTransportFailed       = 2611
	ErrCodeInvocationTimeout     = 2612
	ErrCodeScriptFailed          = 2613
	ErrCodeUnknownAuthScheme     = 2614
	ErrCodeInvalidSchema         = 2615
	ErrCodeInvalidScript         = 2616
	ErrCodeInvalidAuthParams     = 2617
	ErrCodeInvalidRouteRef       = 2618
	ErrCodeInvalidBaseURL        = 2619
	ErrCodeInvalidDataSource     = 2620
	ErrCodeInvalidDirection      = 2621
	ErrCodeInboundAuthFailed     = 2622
	ErrCodeInboundHandlerMissing = 2623
	ErrCodeInvocationCanceled    = 2624
	ErrCodeInvalidEnvelope       = 2625
	ErrCodeInvalidLabel          = 2626
	ErrCodeMissingCodeMap        = 2627
	ErrCodeUnmappedValue         = 2628
	ErrCodeInvalidCodeMap        = 2629
	ErrCodeScriptsBusy           = 2630
)

// Error templates of the integration module (wire-integration §12), message keys
// integration_*. Templates with a {{detail}}, {{scheme}}, {{message}}, {{codeSet}} or {{value}}
// placeholder are derived with WithArgs; compare with errors.Is.
var (
	// ErrContractNotFound: The contract does not exist (2600).
	ErrContractNotFound = rpc.NewError(ErrCodeContractNotFound, http.StatusOK, "integration_contract_not_found")
	// ErrContractDisabled: The contract is disabled (2601).
	ErrContractDisabled = rpc.NewError(ErrCodeContractDisabled, http.StatusOK, "integration_contract_disabled")
	// ErrSystemNotFound: The system does not exist (2602).
	ErrSystemNotFound = rpc.NewError(ErrCodeSystemNotFound, http.StatusOK, "integration_system_not_found")
	// ErrSystemDisabled: The system is disabled (2603).
	ErrSystemDisabled = rpc.NewError(ErrCodeSystemDisabled, http.StatusOK, "integration_system_disabled")
	// ErrAdapterNotFound: No adapter binds this system and contract (2604).
	ErrAdapterNotFound = rpc.NewError(ErrCodeAdapterNotFound, http.StatusOK, "integration_adapter_not_found")
	// ErrAdapterDisabled: The adapter is disabled (2605).
	ErrAdapterDisabled = rpc.NewError(ErrCodeAdapterDisabled, http.StatusOK, "integration_adapter_disabled")
	// ErrRouteNotFound: No route leads to a system for this contract (2606).
	ErrRouteNotFound = rpc.NewError(ErrCodeRouteNotFound, http.StatusOK, "integration_route_not_found")
	// ErrTargetAmbiguous: Give either a system or a route key, not both (2607).
	ErrTargetAmbiguous = rpc.NewError(ErrCodeTargetAmbiguous, http.StatusOK, "integration_target_ambiguous")
	// ErrInputInvalid: Invalid input: detail (2608).
	ErrInputInvalid = rpc.NewError(ErrCodeInputInvalid, http.StatusOK, "integration_input_invalid")
	// ErrOutputInvalid: Invalid output: detail (2609).
	ErrOutputInvalid = rpc.NewError(ErrCodeOutputInvalid, http.StatusOK, "integration_output_invalid")
	// ErrUpstreamFailed: The external system refused: message (2610).
	ErrUpstreamFailed = rpc.NewError(ErrCodeUpstreamFailed, http.StatusOK, "integration_upstream_failed")
	// ErrTransportFailed: The external system could not be reached (2611).
	ErrTransportFailed = rpc.NewError(ErrCodeTransportFailed, http.StatusOK, "integration_transport_failed")
	// ErrInvocationTimeout: The invocation timed out (2612).
	ErrInvocationTimeout = rpc.NewError(ErrCodeInvocationTimeout, http.StatusOK, "integration_invocation_timeout")
	// ErrScriptFailed: The adapter script failed: detail (2613).
	ErrScriptFailed = rpc.NewError(ErrCodeScriptFailed, http.StatusOK, "integration_script_failed")
	// ErrUnknownAuthScheme: Unknown authentication scheme: scheme (2614).
	ErrUnknownAuthScheme = rpc.NewError(ErrCodeUnknownAuthScheme, http.StatusOK, "integration_unknown_auth_scheme")
	// ErrInvalidSchema: Invalid JSON Schema: detail (2615).
	ErrInvalidSchema = rpc.NewError(ErrCodeInvalidSchema, http.StatusOK, "integration_invalid_schema")
	// ErrInvalidScript: Invalid script: detail (2616).
	ErrInvalidScript = rpc.NewError(ErrCodeInvalidScript, http.StatusOK, "integration_invalid_script")
	// ErrInvalidAuthParams: Invalid authentication parameters: detail (2617).
	ErrInvalidAuthParams = rpc.NewError(ErrCodeInvalidAuthParams, http.StatusOK, "integration_invalid_auth_params")
	// ErrInvalidRouteRef: The route refers to a missing contract or system (2618).
	ErrInvalidRouteRef = rpc.NewError(ErrCodeInvalidRouteRef, http.StatusOK, "integration_invalid_route_ref")
	// ErrInvalidBaseURL: The base URL must be an absolute URL (2619).
	ErrInvalidBaseURL = rpc.NewError(ErrCodeInvalidBaseURL, http.StatusOK, "integration_invalid_base_url")
	// ErrInvalidDataSource: Invalid data source: detail (2620).
	ErrInvalidDataSource = rpc.NewError(ErrCodeInvalidDataSource, http.StatusOK, "integration_invalid_data_source")
	// ErrInvalidDirection: The direction must be outbound or inbound (2621).
	ErrInvalidDirection = rpc.NewError(ErrCodeInvalidDirection, http.StatusOK, "integration_invalid_direction")
	// ErrInboundAuthFailed: Inbound authentication failed (2622).
	ErrInboundAuthFailed = rpc.NewError(ErrCodeInboundAuthFailed, http.StatusUnauthorized, "integration_inbound_auth_failed")
	// ErrInboundHandlerMissing: No handler is registered for this contract (2623).
	ErrInboundHandlerMissing = rpc.NewError(ErrCodeInboundHandlerMissing, http.StatusNotImplemented, "integration_inbound_handler_missing")
	// ErrInvocationCanceled: The invocation was canceled (2624).
	ErrInvocationCanceled = rpc.NewError(ErrCodeInvocationCanceled, http.StatusOK, "integration_invocation_canceled")
	// ErrInvalidEnvelope: Invalid envelope: detail (2625).
	ErrInvalidEnvelope = rpc.NewError(ErrCodeInvalidEnvelope, http.StatusOK, "integration_invalid_envelope")
	// ErrInvalidLabel: Invalid label: detail (2626).
	ErrInvalidLabel = rpc.NewError(ErrCodeInvalidLabel, http.StatusOK, "integration_invalid_label")
	// ErrMissingCodeMap: No enabled code map for code set codeSet (2627).
	ErrMissingCodeMap = rpc.NewError(ErrCodeMissingCodeMap, http.StatusOK, "integration_code_map_missing")
	// ErrUnmappedValue: Value value of code set codeSet is not mapped (2628).
	ErrUnmappedValue = rpc.NewError(ErrCodeUnmappedValue, http.StatusOK, "integration_value_unmapped")
	// ErrInvalidCodeMap: Invalid code map: detail (2629).
	ErrInvalidCodeMap = rpc.NewError(ErrCodeInvalidCodeMap, http.StatusOK, "integration_invalid_code_map")
	// ErrScriptsBusy: Every script worker is busy; try again later (2630). Beyond the original:
	// a run that found no free worker within svc.integration.script.queue_wait (kind timeout).
	ErrScriptsBusy = rpc.NewError(ErrCodeScriptsBusy, http.StatusServiceUnavailable, "integration_scripts_busy")
)

// detail derives a copy of tmpl with its {{detail}} argument.
func detail(tmpl *rpc.Error, d string) *rpc.Error { return tmpl.WithArgs("detail", d) }
