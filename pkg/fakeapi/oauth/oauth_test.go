package oauth

import (
	"testing"
)

func TestParseParams(t *testing.T) {
	p, err := ParseParams(`realm="x", oauth_signature="a%2Bb+c%3D", oauth_token="t"`)
	if err != nil {
		t.Fatal(err)
	}
	if p["oauth_signature"] != "a+b+c=" || p["oauth_token"] != "t" {
		t.Fatalf("got %v", p)
	}
	for _, bad := range []string{`oauth_token`, `a="1", a="2"`, `a="%zz"`} {
		if _, err := ParseParams(bad); err == nil {
			t.Fatalf("%q: want error", bad)
		}
	}
	if got := percentEncode("a b/~*é"); got != "a%20b%2F~%2A%C3%A9" {
		t.Fatalf("percentEncode = %q", got)
	}
}
