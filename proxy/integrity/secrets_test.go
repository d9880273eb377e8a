package integrity

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fake credentials in the real shapes. None of them was ever issued.
var (
	fakeAWSKey    = "AKIAIOSFODNN7EXAMPLE" // the example key of AWS's own documentation
	fakeAWSTemp   = "ASIAQWERTYUIOPASDFGH"
	fakeGitHub    = "ghp_0123456789abcdefghijABCDEFGHIJklmnop"
	fakeGitHubPAT = "github_pat_11ABCDEFG0" + strings.Repeat("x1Y2z", 14) + "ab"
	fakeSlack     = "xoxb-1234567890-1234567890123-abcdefghijABCDEFGHIJklmn"
	fakeOpenAI    = "sk-proj-abcDEF123ghiJKL456mnoPQR789stuVWX0yz"
	fakeAnthropic = "sk-ant-api03-" + strings.Repeat("aB3_cD4-eF5", 8) + "AA"
	fakeGoogle    = "AIzaSyA1234567890abcdefghijklmnopqrstuv"
	fakeJWT       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	fakeStripe    = "sk_live_0123456789abcdefABCDEF"
	fakePEMBody   = strings.Repeat("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n", 3)
	fakePEM       = "-----BEGIN RSA PRIVATE KEY-----\n" + fakePEMBody + "-----END RSA PRIVATE KEY-----"
)

type span struct {
	Kind string
	Text string
}

func secretsIn(s string) []span {
	var out []span
	eachSecret(s, func(kind string, start, end int) bool {
		out = append(out, span{kind, s[start:end]})
		return true
	})
	return out
}

func TestSecretDetectors(t *testing.T) {
	tests := []struct {
		name, in string
		want     []span // nil: no secret
	}{
		{"aws long-term key", "aws_access_key_id = " + fakeAWSKey + "\n", []span{{KindAWSAccessKey, fakeAWSKey}}},
		{"aws temporary key in JSON", `{"AccessKeyId":"` + fakeAWSTemp + `"}`, []span{{KindAWSAccessKey, fakeAWSTemp}}},
		{"github classic token", "token: " + fakeGitHub, []span{{KindGitHubToken, fakeGitHub}}},
		{"github oauth, app and refresh tokens", "gho_" + fakeGitHub[4:] + " ghu_" + fakeGitHub[4:] + ",ghs_" + fakeGitHub[4:] + ";ghr_" + fakeGitHub[4:],
			[]span{{KindGitHubToken, "gho_" + fakeGitHub[4:]}, {KindGitHubToken, "ghu_" + fakeGitHub[4:]}, {KindGitHubToken, "ghs_" + fakeGitHub[4:]}, {KindGitHubToken, "ghr_" + fakeGitHub[4:]}}},
		{"github fine-grained token", "GITHUB_TOKEN=" + fakeGitHubPAT, []span{{KindGitHubToken, fakeGitHubPAT}}},
		{"slack bot token", "Authorization: Bearer " + fakeSlack, []span{{KindSlackToken, fakeSlack}}},
		{"openai project key", "OPENAI_API_KEY=" + fakeOpenAI, []span{{KindOpenAIKey, fakeOpenAI}}},
		{"anthropic key", "x-api-key: " + fakeAnthropic, []span{{KindAnthropicKey, fakeAnthropic}}},
		{"google api key", "https://maps.example/api?key=" + fakeGoogle + "&q=x", []span{{KindGoogleAPIKey, fakeGoogle}}},
		{"jwt", "Authorization: Bearer " + fakeJWT, []span{{KindJWT, fakeJWT}}},
		{"unsigned jwt", "t=" + fakeJWT[:strings.LastIndexByte(fakeJWT, '.')+1] + " end", []span{{KindJWT, fakeJWT[:strings.LastIndexByte(fakeJWT, '.')+1]}}},
		{"stripe live key", `stripe.api_key = "` + fakeStripe + `"`, []span{{KindStripeKey, fakeStripe}}},
		{"stripe restricted key", "rk_live_" + fakeStripe[8:], []span{{KindStripeKey, "rk_live_" + fakeStripe[8:]}}},
		{"pem private key", "key:\n" + fakePEM + "\ndone", []span{{KindPrivateKey, fakePEM}}},
		{"openssh key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + fakePEMBody + "-----END OPENSSH PRIVATE KEY-----",
			[]span{{KindPrivateKey, "-----BEGIN OPENSSH PRIVATE KEY-----\n" + fakePEMBody + "-----END OPENSSH PRIVATE KEY-----"}}},
		{"pem cut short", "-----BEGIN PRIVATE KEY-----\n" + fakePEMBody + "...[truncated]",
			[]span{{KindPrivateKey, "-----BEGIN PRIVATE KEY-----\n" + fakePEMBody}}},
		{"pem in a JSON string", `{"key":"-----BEGIN EC PRIVATE KEY-----\n` + strings.ReplaceAll(fakePEMBody, "\n", `\n`) + `-----END EC PRIVATE KEY-----\n"}`,
			[]span{{KindPrivateKey, `-----BEGIN EC PRIVATE KEY-----\n` + strings.ReplaceAll(fakePEMBody, "\n", `\n`) + `-----END EC PRIVATE KEY-----`}}},
		{"token after a JSON newline escape", `"line\n` + fakeGitHub + `"`, []span{{KindGitHubToken, fakeGitHub}}},

		// Near misses: none of these is a secret.
		{"AKIA in prose", "AWS access key ids start with AKIA or ASIA, followed by 16 characters.", nil},
		{"aws key one short", "AKIAIOSFODNN7EXAMPL", nil},
		{"aws key one long", "AKIAIOSFODNN7EXAMPLEX", nil},
		{"aws key inside a word", "XAKIAIOSFODNN7EXAMPLE", nil},
		{"aws key in lower case", "AKIAiosfodnn7example", nil},
		{"aws key with non-base32 digits", "AKIAIOSFODNN1EXAMPLE", nil},
		{"short sk- word", "pip install scikit-learn; import sk-learn", nil},
		{"long sk- slug without caps or digits", "sk-this-is-a-very-long-hyphenated-slug-of-words", nil},
		{"sk- inside a word", "task-0123456789ABCDEFabcdef0123456789", nil},
		{"sk- key too short", "sk-abcDEF123", nil},
		{"ghp_ too short", "ghp_0123456789abcdef", nil},
		{"ghp_ in prose", "classic tokens start with ghp_ and fine-grained ones with github_pat_", nil},
		{"xoxo", "xoxo-hugs-and-kisses-from-everyone-1234", nil},
		{"xoxb without digits", "xoxb-not-a-real-token-at-all", nil},
		{"jwt header alone", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", nil},
		{"jwt with a short payload", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhIjoxfQ.sig", nil},
		{"stripe test key", "sk_test_0123456789abcdefABCDEF", nil},
		{"stripe live key too short", "sk_live_short", nil},
		{"AIza one short", "AIzaSyA1234567890abcdefghijklmnopqrstu", nil},
		{"AIza one long", "AIzaSyA1234567890abcdefghijklmnopqrstuvw", nil},
		{"public key", "-----BEGIN PUBLIC KEY-----\n" + fakePEMBody + "-----END PUBLIC KEY-----", nil},
		{"certificate", "-----BEGIN CERTIFICATE-----\n" + fakePEMBody + "-----END CERTIFICATE-----", nil},
		{"private key header without a key", "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----", nil},
		{"private key header in docs", "A PEM file starts with -----BEGIN PRIVATE KEY----- and ends with -----END PRIVATE KEY-----.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, secretsIn(tt.in)); diff != "" {
				t.Errorf("secrets in %q (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestRedactSecrets(t *testing.T) {
	in := "id " + fakeAWSKey + ", secret in " + fakePEM + " and " + fakeJWT + "."
	want := "id [redacted aws_access_key_id], secret in [redacted private_key] and [redacted jwt]."
	if got, ok := redactSecrets(in); !ok || got != want {
		t.Errorf("redactSecrets: got %q, %v; want %q", got, ok, want)
	}
	if got, ok := redactSecrets("nothing here"); ok || got != "nothing here" {
		t.Errorf("clean text: got %q, %v", got, ok)
	}
}

// A text of many PEM headers without END lines must not make each header
// search the rest of the text.
func TestPEMHeadersWithoutEndStayLinear(t *testing.T) {
	s := strings.Repeat("-----BEGIN RSA PRIVATE KEY-----\nMII\n", 50000)
	if got := secretsIn(s); got != nil {
		t.Errorf("got %d secrets, want none", len(got))
	}
}

// A long run of a token's characters that holds a candidate every few
// bytes ("sk-sk-sk-...", where each "sk-" starts a word) is read once, not
// once per candidate: the runs read at most a few times the text, which
// was quadratic before (a 200 KB result took 17 s).
func TestTokenRunsAreReadOnce(t *testing.T) {
	for _, unit := range []string{"sk-", "xoxb-", "eyJ-", "AIza-", "sk-ant-", "eyJhbGciOiJIUzI1NiJ9-"} {
		s := strings.Repeat(unit, (64<<10)/len(unit))
		sc := secretScan{s: s, endAt: -2}
		var found int
		sc.each(func(string, int, int) bool { found++; return true })
		if found != 0 {
			t.Errorf("%q repeated: %d secrets, want none", unit, found)
		}
		if sc.measured > 4*len(s) {
			t.Errorf("%q repeated: the runs read %d bytes of a %d-byte text, want at most %d", unit, sc.measured, len(s), 4*len(s))
		}
	}
}

// BenchmarkRedactSecrets: a tool name and a log line, which hold no
// secret, as the audit record, the span and every log record pass them.
func BenchmarkRedactSecrets(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		_ = RedactSecrets("filesystem_read_text_file")
		_ = RedactSecrets("upstream connected tools=14 resources=0 prompts=2")
	}
}
