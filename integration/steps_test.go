package integration_test

import (
	"encoding/json"
	"testing"

	"github.com/svc-framework/svc/rpc"
)

const (
	contractR = "integration/contract"
	systemR   = "integration/system"
	adapterR  = "integration/adapter"
	routeR    = "integration/route"
	codeMapR  = "integration/code_map"
	codeSetR  = "integration/code_set"
	logR      = "integration/log"
)

var page1 = map[string]any{"page": 1, "size": 15}

// definitionSteps is the scenario of TestDefinitions, in order; created ids are referred to as
// $step name$.
func definitionSteps() []step {
	any1 := func(t *testing.T, data json.RawMessage) {}
	_ = any1
	return []step{
		// integration/contract
		{name: "c1", resource: contractR, action: "create", params: `{"code":"patient.sync","name":"Patient sync","labels":{"domain":"his","tier":"1"},
			"inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["id"],"properties":{"id":{"type":"string"}}}}`},
		{name: "c2", resource: contractR, action: "create", params: `{"code":"order.create","name":"Order create","labels":{"domain":"lis"},"isEnabled":false}`},
		{name: "contract duplicate code", resource: contractR, action: "create", params: `{"code":"patient.sync","name":"x"}`, wantCode: rpc.CodeRecordAlreadyExists},
		{name: "contract code required", resource: contractR, action: "create", params: `{"name":"x"}`, wantCode: rpc.CodeBadRequest},
		{name: "contract bad schema", resource: contractR, action: "create", params: `{"code":"x","name":"x","inputSchema":{"type":"nope"}}`, wantCode: integrationCode("InvalidSchema")},
		{name: "contract bad output schema", resource: contractR, action: "create", params: `{"code":"x","name":"x","outputSchema":{"minimum":"a"}}`, wantCode: integrationCode("InvalidSchema")},
		{name: "contract bad label key", resource: contractR, action: "create", params: `{"code":"x","name":"x","labels":{"a.b":"c"}}`, wantCode: integrationCode("InvalidLabel")},
		{name: "contract label key too long", resource: contractR, action: "create", params: `{"code":"x","name":"x","labels":{"` + long(64) + `":"c"}}`, wantCode: integrationCode("InvalidLabel")},
		{name: "contract label value too long", resource: contractR, action: "create", params: `{"code":"x","name":"x","labels":{"k":"` + long(257) + `"}}`, wantCode: integrationCode("InvalidLabel")},
		{name: "contract create needs permission", resource: contractR, action: "create", as: viewer, params: `{"code":"x","name":"x"}`, wantCode: rpc.CodeAccessDenied},
		{name: "contract find_page all", resource: contractR, action: "find_page", params: `{}`, meta: page1, wantTotal: 2},
		{name: "contract find_page code contains", resource: contractR, action: "find_page", params: `{"code":"sync"}`, meta: page1, wantTotal: 1, as: viewer,
			check: wantJSON("items.labels", map[string]string{"domain": "his", "tier": "1"})},
		{name: "contract find_page name contains", resource: contractR, action: "find_page", params: `{"name":"Order"}`, meta: page1, wantTotal: 1},
		{name: "contract find_page isEnabled", resource: contractR, action: "find_page", params: `{"isEnabled":false}`, meta: page1, wantTotal: 1,
			check: wantJSON("items.code", "order.create")},
		{name: "contract find_page labels", resource: contractR, action: "find_page", params: `{"labels":{"domain":"his","tier":"1"}}`, meta: page1, wantTotal: 1},
		{name: "contract find_page labels no match", resource: contractR, action: "find_page", params: `{"labels":{"domain":"his","tier":"2"}}`, meta: page1, wantTotal: 0},
		{name: "contract filter in meta", resource: contractR, action: "find_page", params: `{}`, meta: map[string]any{"page": 1, "size": 15, "code": "order"}, wantTotal: 1},
		{name: "contract paging", resource: contractR, action: "find_page", params: `{}`, meta: map[string]any{"page": 2, "size": 1}, wantTotal: 2,
			check: wantJSON("items.code", "patient.sync")},
		{name: "contract find_all", resource: contractR, action: "find_all", params: `{"code":"order"}`, check: wantJSON("code", "order.create")},
		{name: "contract update", resource: contractR, action: "update", params: `{"id":"$c2$","code":"order.create","name":"Order create v2","isEnabled":true}`},
		{name: "contract updated", resource: contractR, action: "find_all", params: `{"code":"order"}`, check: wantJSON("name", "Order create v2")},
		{name: "contract update missing", resource: contractR, action: "update", params: `{"id":"nope","code":"q","name":"q"}`, wantCode: rpc.CodeRecordNotFound},
		{name: "contract update without id", resource: contractR, action: "update", params: `{"code":"q","name":"q"}`, wantCode: rpc.CodeBadRequest},
		{name: "contract update needs permission", resource: contractR, action: "update", as: viewer, params: `{"id":"$c2$","code":"q","name":"q"}`, wantCode: rpc.CodeAccessDenied},

		// integration/system (gzip+base64 writes, as the client sends them)
		{name: "s1", resource: systemR, action: "create", gzip: true, params: `{"code":"HIS","name":"Hospital","baseUrl":"https://his.example.com/api",
			"outboundAuth":{"scheme":"http_basic","params":{"username":"svc","password":"s3cret-pass"}},
			"inboundAuth":{"scheme":"bearer","params":{"token":"tok-123"}},
			"dataSource":{"kind":"postgres","host":"db","user":"u","password":"db-pw"},"params":{"region":"north"},"timeoutMs":5000,"retry":{"maxAttempts":3}}`},
		{name: "s2", resource: systemR, action: "create", gzip: true, params: `{"code":"LIS","name":"Lab","outboundAuth":{"scheme":"header","params":{"X-Key":"hdr-secret"}}}`},
		{name: "system masked", resource: systemR, action: "find_page", params: `{"code":"HIS"}`, meta: page1, wantTotal: 1, as: viewer,
			check: func(t *testing.T, d json.RawMessage) {
				wantJSON("items.outboundAuth", map[string]any{"scheme": "http_basic", "params": map[string]string{"username": "svc", "password": "******"}})(t, d)
				wantJSON("items.inboundAuth.params.token", "******")(t, d)
				wantJSON("items.dataSource.password", "******")(t, d)
				notContains("s3cret-pass", "tok-123", "db-pw", "enc:")(t, d)
			}},
		{name: "system find_all masked", resource: systemR, action: "find_all", params: `{"name":"Lab"}`,
			check: func(t *testing.T, d json.RawMessage) {
				wantJSON("outboundAuth.params.X-Key", "******")(t, d)
				notContains("hdr-secret")(t, d)
			}},
		{name: "system isEnabled filter", resource: systemR, action: "find_page", params: `{"isEnabled":false}`, meta: page1, wantTotal: 0},
		{name: "system duplicate", resource: systemR, action: "create", gzip: true, params: `{"code":"HIS","name":"x"}`, wantCode: rpc.CodeRecordAlreadyExists},
		{name: "system unknown scheme", resource: systemR, action: "create", gzip: true, params: `{"code":"X","name":"x","outboundAuth":{"scheme":"kerberos"}}`, wantCode: integrationCode("UnknownAuthScheme")},
		{name: "system basic without password", resource: systemR, action: "create", gzip: true, params: `{"code":"X","name":"x","outboundAuth":{"scheme":"http_basic","params":{"username":"a"}}}`, wantCode: integrationCode("InvalidAuthParams")},
		{name: "system ip empty whitelist", resource: systemR, action: "create", params: `{"code":"X","name":"x","inboundAuth":{"scheme":"ip","params":{"whitelist":""}}}`, wantCode: integrationCode("InvalidAuthParams")},
		{name: "system signature secret not hex", resource: systemR, action: "create", params: `{"code":"X","name":"x","inboundAuth":{"scheme":"signature","params":{"secret":"zz"}}}`, wantCode: integrationCode("InvalidAuthParams")},
		{name: "system masked secret without prior", resource: systemR, action: "create", params: `{"code":"X","name":"x","outboundAuth":{"scheme":"bearer","params":{"token":"******"}}}`, wantCode: integrationCode("InvalidAuthParams")},
		{name: "system relative base URL", resource: systemR, action: "create", params: `{"code":"X","name":"x","baseUrl":"/api"}`, wantCode: integrationCode("InvalidBaseURL")},
		{name: "system data source without kind", resource: systemR, action: "create", params: `{"code":"X","name":"x","dataSource":{"host":"h"}}`, wantCode: integrationCode("InvalidDataSource")},
		{name: "system data source bad mode", resource: systemR, action: "create", params: `{"code":"X","name":"x","dataSource":{"kind":"mysql","mode":"write"}}`, wantCode: integrationCode("InvalidDataSource")},
		{name: "system data source masked password without prior", resource: systemR, action: "create", params: `{"code":"X","name":"x","dataSource":{"kind":"mysql","password":"******"}}`, wantCode: integrationCode("InvalidDataSource")},
		{name: "system envelope without base URL", resource: systemR, action: "create", params: `{"code":"X","name":"x","outboundEnvelope":{"request":"return request"}}`, wantCode: integrationCode("InvalidEnvelope")},
		{name: "system envelope without scripts", resource: systemR, action: "create", params: `{"code":"X","name":"x","baseUrl":"https://a.b","outboundEnvelope":{}}`, wantCode: integrationCode("InvalidEnvelope")},
		{name: "system envelope that does not compile", resource: systemR, action: "create", params: `{"code":"X","name":"x","baseUrl":"https://a.b","outboundEnvelope":{"response":"return ("}}`, wantCode: integrationCode("InvalidEnvelope")},
		{name: "system auth script that does not compile", resource: systemR, action: "create", params: `{"code":"X","name":"x","inboundAuth":{"scheme":"script","script":"return ("}}`, wantCode: integrationCode("InvalidAuthParams")},
		{name: "system update keeps masked secrets", resource: systemR, action: "update", gzip: true, params: `{"id":"$s1$","code":"HIS","name":"Hospital 2","baseUrl":"https://his.example.com/api",
			"outboundAuth":{"scheme":"http_basic","params":{"username":"svc2","password":"******"}},"inboundAuth":{"scheme":"bearer","params":{"token":"******"}},
			"dataSource":{"kind":"postgres","host":"db","user":"u","password":"******"}}`},
		{name: "system update needs permission", resource: systemR, action: "update", as: viewer, params: `{"id":"$s1$","code":"HIS","name":"x"}`, wantCode: rpc.CodeAccessDenied},

		// integration/adapter
		{name: "a1", resource: adapterR, action: "create", gzip: true, params: `{"systemId":"$s1$","contractId":"$c1$","script":"return {id: input.id}"}`},
		{name: "a2", resource: adapterR, action: "create", gzip: true, params: `{"systemId":"$s1$","contractId":"$c1$","direction":"inbound","script":"return dispatch(request)","timeoutMs":100}`},
		{name: "adapter duplicate", resource: adapterR, action: "create", gzip: true, params: `{"systemId":"$s1$","contractId":"$c1$","direction":"outbound","script":"return 1"}`, wantCode: rpc.CodeRecordAlreadyExists},
		{name: "adapter bad direction", resource: adapterR, action: "create", params: `{"systemId":"$s1$","contractId":"$c1$","direction":"sideways","script":"return 1"}`, wantCode: integrationCode("InvalidDirection")},
		{name: "adapter empty script", resource: adapterR, action: "create", params: `{"systemId":"$s1$","contractId":"$c2$","script":"  "}`, wantCode: integrationCode("InvalidScript")},
		{name: "adapter script syntax error", resource: adapterR, action: "create", params: `{"systemId":"$s1$","contractId":"$c2$","script":"return {"}`, wantCode: integrationCode("InvalidScript")},
		{name: "adapter missing system", resource: adapterR, action: "create", params: `{"systemId":"nope","contractId":"$c2$","script":"return 1"}`, wantCode: rpc.CodeForeignKeyViolation},
		{name: "adapter required", resource: adapterR, action: "create", params: `{"script":"return 1"}`, wantCode: rpc.CodeBadRequest},
		{name: "adapter find_page direction", resource: adapterR, action: "find_page", params: `{"direction":"inbound"}`, meta: page1, wantTotal: 1, check: wantJSON("items.timeoutMs", 100)},
		{name: "adapter find_page system", resource: adapterR, action: "find_page", params: `{"systemId":"$s1$","contractId":"$c1$"}`, meta: page1, wantTotal: 2},
		{name: "adapter find_all enabled", resource: adapterR, action: "find_all", params: `{"isEnabled":true,"direction":"outbound"}`, check: wantJSON("direction", "outbound")},
		{name: "adapter update", resource: adapterR, action: "update", gzip: true, params: `{"id":"$a1$","systemId":"$s1$","contractId":"$c1$","script":"return 2","isEnabled":false}`},
		{name: "adapter updated", resource: adapterR, action: "find_page", params: `{"isEnabled":false}`, meta: page1, wantTotal: 1, check: wantJSON("items.script", "return 2")},
		{name: "adapter query needs permission", resource: adapterR, action: "find_page", as: viewer, params: `{}`, meta: page1, wantCode: rpc.CodeAccessDenied},

		// integration/route
		{name: "r1", resource: routeR, action: "create", params: `{"routeKey":"north","contractId":"$c1$","systemId":"$s1$"}`},
		{name: "r2", resource: routeR, action: "create", params: `{"systemId":"$s2$"}`},
		{name: "route duplicate", resource: routeR, action: "create", params: `{"systemId":"$s1$"}`, wantCode: rpc.CodeRecordAlreadyExists},
		{name: "route missing contract", resource: routeR, action: "create", params: `{"routeKey":"x","contractId":"nope","systemId":"$s1$"}`, wantCode: integrationCode("InvalidRouteRef")},
		{name: "route missing system", resource: routeR, action: "create", params: `{"routeKey":"x","systemId":"nope"}`, wantCode: integrationCode("InvalidRouteRef")},
		{name: "route find_page key contains", resource: routeR, action: "find_page", params: `{"routeKey":"ort"}`, meta: page1, wantTotal: 1},
		{name: "route find_page wildcard contract", resource: routeR, action: "find_page", params: `{"systemId":"$s2$"}`, meta: page1, wantTotal: 1, check: wantJSON("items.contractId", "")},
		{name: "route update", resource: routeR, action: "update", params: `{"id":"$r2$","routeKey":"south","systemId":"$s2$","isEnabled":false}`},
		{name: "route find_all disabled", resource: routeR, action: "find_all", params: `{"isEnabled":false}`, check: wantJSON("routeKey", "south")},

		// integration/code_map
		{name: "m1", resource: codeMapR, action: "create", params: `{"systemId":"$s1$","codeSet":"gender","name":"Gender",
			"entries":[{"canonical":"M","external":1,"canonicalAliases":["male"]},{"canonical":"F","external":"2","externalAliases":[true]}],"onUnmapped":"fallback","fallbackExternal":0}`},
		{name: "code map duplicate set", resource: codeMapR, action: "create", params: `{"systemId":"$s1$","codeSet":"gender","name":"x"}`, wantCode: rpc.CodeRecordAlreadyExists},
		{name: "code map duplicate external across types", resource: codeMapR, action: "create", params: `{"systemId":"$s2$","codeSet":"g","name":"x",
			"entries":[{"canonical":"M","external":1},{"canonical":"F","external":"1"}]}`, wantCode: integrationCode("InvalidCodeMap")},
		{name: "code map alias duplicates a primary", resource: codeMapR, action: "create", params: `{"systemId":"$s2$","codeSet":"g","name":"x",
			"entries":[{"canonical":"M","external":1},{"canonical":"F","external":2,"canonicalAliases":["M"]}]}`, wantCode: integrationCode("InvalidCodeMap")},
		{name: "code map object value", resource: codeMapR, action: "create", params: `{"systemId":"$s2$","codeSet":"g","name":"x","entries":[{"canonical":{},"external":1}]}`, wantCode: integrationCode("InvalidCodeMap")},
		{name: "code map bad policy", resource: codeMapR, action: "create", params: `{"systemId":"$s2$","codeSet":"g","name":"x","onUnmapped":"drop"}`, wantCode: integrationCode("InvalidCodeMap")},
		{name: "code map required", resource: codeMapR, action: "create", params: `{"systemId":"$s2$","name":"x"}`, wantCode: rpc.CodeBadRequest},
		{name: "code map find_page", resource: codeMapR, action: "find_page", params: `{"codeSet":"gen","name":"Gen","systemId":"$s1$"}`, meta: page1, wantTotal: 1, as: viewer,
			check: wantJSON("items.entries", []any{map[string]any{"canonical": "M", "external": 1, "canonicalAliases": []string{"male"}},
				map[string]any{"canonical": "F", "external": "2", "externalAliases": []bool{true}}})},
		{name: "code map default policy", resource: codeMapR, action: "create", params: `{"systemId":"$s2$","codeSet":"blood","name":"Blood"}`},
		{name: "code map find_all", resource: codeMapR, action: "find_all", params: `{"codeSet":"blood"}`, check: wantJSON("onUnmapped", "reject")},
		{name: "code map update", resource: codeMapR, action: "update", params: `{"id":"$code map default policy$","systemId":"$s2$","codeSet":"blood","name":"Blood 2","onUnmapped":"passthrough"}`},

		// integration/code_set without a host catalog
		{name: "code sets unsupported", resource: codeSetR, action: "list_code_sets", as: viewer, check: wantJSON("supported", false)},
		{name: "codes unsupported", resource: codeSetR, action: "list_codes", params: `{"codeSet":"gender"}`, check: wantJSON("supported", false)},
		{name: "codes need codeSet", resource: codeSetR, action: "list_codes", params: `{}`, wantCode: rpc.CodeBadRequest},

		// integration/log (empty; recorder rows are covered by TestRecorder)
		{name: "log find_page", resource: logR, action: "find_page", params: `{"systemCode":"HIS"}`, meta: page1, wantTotal: 0, as: viewer},
		{name: "log find_one none", resource: logR, action: "find_one", params: `{"requestId":"x"}`, wantCode: rpc.CodeRecordNotFound},
		{name: "log needs permission", resource: logR, action: "find_page", as: svctestNobody, params: `{}`, wantCode: rpc.CodeAccessDenied},

		// deletes: referenced rows are refused (2003), then removed in order
		{name: "delete referenced contract (adapter)", resource: contractR, action: "delete", params: `{"id":"$c1$"}`, wantCode: rpc.CodeForeignKeyViolation},
		{name: "delete referenced system", resource: systemR, action: "delete", params: `{"id":"$s2$"}`, wantCode: rpc.CodeForeignKeyViolation},
		{name: "delete adapters", resource: adapterR, action: "delete_many", params: `{"pks":["$a1$","$a2$"]}`},
		{name: "delete contract referenced by a route", resource: contractR, action: "delete", params: `{"id":"$c1$"}`, wantCode: rpc.CodeForeignKeyViolation},
		{name: "delete route", resource: routeR, action: "delete", params: `{"id":"$r1$"}`},
		{name: "delete contract", resource: contractR, action: "delete", params: `{"id":"$c1$"}`},
		{name: "delete contract again", resource: contractR, action: "delete", params: `{"id":"$c1$"}`, wantCode: rpc.CodeRecordNotFound},
		{name: "delete needs permission", resource: contractR, action: "delete_many", as: viewer, params: `{"pks":["$c2$"]}`, wantCode: rpc.CodeAccessDenied},
		{name: "delete code map", resource: codeMapR, action: "delete", params: `{"id":"$m1$"}`},
		{name: "contracts left", resource: contractR, action: "find_page", params: `{}`, meta: page1, wantTotal: 1},
	}
}
