package faults

import (
	"math/rand/v2"
	"testing"
	"time"
)

const testOwner = "orga_11111111-2222-3333-4444-555555555555"

func TestOwnerFaultsJSON(t *testing.T) {
	f, err := FromJSON([]byte(`{"owners":{"`+testOwner+`":{"status":500,"retryAfter":"2s","latency":"10ms","malformedJSON":true,"extraEnv":[{"name":"A","value":"b"}]}},"hiddenProviders":["kv"],"revokedTokens":["t"]}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	of := f.Owners[testOwner]
	if of.Status != 500 || of.RetryAfter != 2*time.Second || of.Latency != 10*time.Millisecond || !of.MalformedJSON || len(of.ExtraEnv) != 1 ||
		f.HiddenProviders[0] != "kv" || f.RevokedTokens[0] != "t" {
		t.Fatalf("%+v", f)
	}
	in := NewInjector(Faults{}, rand.New(rand.NewPCG(1, 2)))
	in.Set(f)
	back := ToJSON(in.Get())
	if back.Owners[testOwner].RetryAfter != "2s" || back.HiddenProviders[0] != "kv" {
		t.Fatalf("%+v", back)
	}
	for _, bad := range []string{`{"owners":{"acme":{}}}`, `{"owners":{"` + testOwner + `":{"status":200}}}`, `{"owners":{"` + testOwner + `":{"latency":"x"}}}`} {
		if _, err := FromJSON([]byte(bad), time.Now()); err == nil {
			t.Fatalf("accepted %s", bad)
		}
	}
}
