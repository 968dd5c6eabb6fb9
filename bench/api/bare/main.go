// Command bare is the baseline of bench/api/run.sh: a plain net/http handler that does the
// least an /api endpoint must do — read and decode the JSON envelope, check the Bearer header is
// present, and write a {code, message, data} envelope — so svc's throughput can be compared with
// it on the same machine in the same run.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"strings"
)

type envelope struct {
	Resource string          `json:"resource"`
	Action   string          `json:"action"`
	Version  string          `json:"version"`
	Params   json.RawMessage `json:"params"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:18082", "listen address")
	flag.Parse()
	http.HandleFunc("POST /api", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
			return
		}
		var env envelope
		if err := json.NewDecoder(r.Body).Decode(&env); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(map[string]any{"code": 0, "message": "Success", "data": env.Params})
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
