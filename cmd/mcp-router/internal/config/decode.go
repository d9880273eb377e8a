package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/internal/editdist"
)

// The file's shape (docs/reference.md says what each key does). Unknown keys anywhere are errors.
type rawConfig struct {
	DefaultProfile string              `yaml:"default_profile"`
	Log            Log                 `yaml:"log"`
	StateDir       string              `yaml:"state_dir"`
	State          State               `yaml:"state"`
	HTTP           rawHTTP             `yaml:"http"`
	Limits         rawLimits           `yaml:"limits"`
	Ollama         Ollama              `yaml:"ollama"`
	Audit          rawAudit            `yaml:"audit"`
	Tracing        rawTracing          `yaml:"tracing"`
	Profiles       ordered[rawProfile] `yaml:"profiles"`
}

type rawHTTP struct {
	BearerTokens    []string       `yaml:"bearer_tokens"`
	AllowedOrigins  []string       `yaml:"allowed_origins"`
	AllowedHosts    []string       `yaml:"allowed_hosts"`
	DisconnectGrace *GraceValue    `yaml:"disconnect_grace"`
	Tokens          []rawToken     `yaml:"tokens"`
	OIDC            *rawOIDC       `yaml:"oidc"`
	SessionKey      string         `yaml:"session_key"`
	TrustedProxies  []trustedProxy `yaml:"trusted_proxies"`

	// Bounds on each client (bounds.go).
	HeaderTimeout        DurationValue `yaml:"header_timeout"`
	IdleTimeout          DurationValue `yaml:"idle_timeout"`
	BodyTimeout          DurationValue `yaml:"body_timeout"`
	MaxSessionsPerClient sizeValue     `yaml:"max_sessions_per_client"`
	MaxStreamsPerSession sizeValue     `yaml:"max_streams_per_session"`
	MaxBodyMemory        byteSize      `yaml:"max_body_memory"`
}

type rawProfile struct {
	Upstreams         ordered[rawUpstream] `yaml:"upstreams"`
	CoreTools         []string             `yaml:"core_tools"`
	Routing           rawRouting           `yaml:"routing"`
	Planner           rawPlanner           `yaml:"planner"`
	Integrity         rawIntegrity         `yaml:"integrity"`
	Approvals         rawApprovals         `yaml:"approvals"`
	ValidateArguments bool                 `yaml:"validate_arguments"`
}

type rawIntegrity struct {
	Pins      *bool  `yaml:"pins"`
	Poisoning string `yaml:"poisoning"`
	Results   string `yaml:"results"` // the profile's default; an upstream's results overrides it
}

type rawPlanner struct {
	Prompt          string        `yaml:"prompt"`
	SensitiveTopics []string      `yaml:"sensitive_topics"`
	Timeout         DurationValue `yaml:"timeout"`
}

type rawRouting struct {
	Mode              string         `yaml:"mode"`
	TopK              *int           `yaml:"top_k"`
	Threshold         *float64       `yaml:"threshold"`
	MaxTools          *int           `yaml:"max_tools"`
	Affinity          rawAffinity    `yaml:"affinity"`
	CollisionDelta    *float64       `yaml:"collision_delta"`
	AbstainCoverage   *float64       `yaml:"abstain_coverage"`
	AbstainCommitment *float64       `yaml:"abstain_commitment"`
	AbstainAdvice     *float64       `yaml:"abstain_advice"`
	KeepCoverage      *float64       `yaml:"keep_coverage"`
	DiscoveryPrefixes *[]string      `yaml:"discovery_prefixes"`
	Breaker           rawBreaker     `yaml:"breaker"`
	SemanticWeight    *float64       `yaml:"semantic_weight"`
	Lessons           *bool          `yaml:"lessons"`
	SharedLessons     *bool          `yaml:"shared_lessons"`
	Fuse              map[string]any `yaml:"fuse"`
}

type rawAffinity struct {
	SameDomain  *float64 `yaml:"same_domain"`
	CrossDomain *float64 `yaml:"cross_domain"`
}

type rawBreaker struct {
	MaxDiscoveries *int          `yaml:"max_discoveries"`
	ResetAfter     DurationValue `yaml:"reset_after"`
}

type rawUpstream struct {
	Command           *string           `yaml:"command"`
	Args              []string          `yaml:"args"`
	Env               map[string]string `yaml:"env"`
	Cwd               string            `yaml:"cwd"`
	InheritEnv        bool              `yaml:"inherit_env"`
	URL               *string           `yaml:"url"`
	Headers           map[string]string `yaml:"headers"`
	Transport         string            `yaml:"transport"`
	Builtin           *string           `yaml:"builtin"`
	Prefix            *string           `yaml:"prefix"`
	Domain            string            `yaml:"domain"`
	Timeout           DurationValue     `yaml:"timeout"`
	MaxTimeout        DurationValue     `yaml:"max_timeout"`
	Enabled           *bool             `yaml:"enabled"`
	Tools             rawToolFilter     `yaml:"tools"`
	Protocol          string            `yaml:"protocol"`
	Results           string            `yaml:"results"` // integrity.results for this upstream
	ValidateArguments *bool             `yaml:"validate_arguments"`
	TrustAnnotations  bool              `yaml:"trust_annotations"`
	ReadOnlyTools     []string          `yaml:"read_only_tools"`
	Description       string            `yaml:"description"`
	Auth              *rawAuth          `yaml:"auth"`
	ConnectTimeout    DurationValue     `yaml:"connect_timeout"`
}

type rawAuth struct {
	ClientID          string            `yaml:"client_id"`
	ClientSecret      string            `yaml:"client_secret"`
	AuthMethod        string            `yaml:"token_endpoint_auth_method"`
	ClientMetadataURL string            `yaml:"client_metadata_url"`
	Scopes            []string          `yaml:"scopes"`
	RedirectURL       string            `yaml:"redirect_url"`
	PerUser           bool              `yaml:"per_user"`
	TokenExchange     *rawTokenExchange `yaml:"token_exchange"`
}

type rawTokenExchange struct {
	TokenEndpoint    string `yaml:"token_endpoint"`
	ClientID         string `yaml:"client_id"`
	ClientSecret     string `yaml:"client_secret"`
	Audience         string `yaml:"audience"`
	Scope            string `yaml:"scope"`
	Resource         string `yaml:"resource"`
	SubjectTokenType string `yaml:"subject_token_type"`
}

type rawToolFilter struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// ordered is a YAML mapping decoded in file order, with each key's line.
type ordered[T any] []entry[T]

type entry[T any] struct {
	Key   string
	Line  int
	Value T
	Node  *yaml.Node
}

// UnmarshalYAML keeps the mapping's order and lines.
func (o *ordered[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return errors.New("want a mapping of names to settings")
	}
	*o = (*o)[:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var val T
		if err := v.Decode(&val); err != nil {
			return err
		}
		*o = append(*o, entry[T]{Key: k.Value, Line: k.Line, Value: val, Node: v})
	}
	return nil
}

func (o ordered[T]) valueType() reflect.Type { return reflect.TypeFor[T]() }

type orderedMap interface{ valueType() reflect.Type }

// decoder checks a node tree against a Go type before decoding it, so that every problem is
// reported with its key path and line, all at once.
type decoder struct{ validator }

// decode checks n against out's type and, when it is clean, decodes it.
func (d *decoder) decode(n *yaml.Node, path string, out any) {
	d.check(n, reflect.TypeOf(out).Elem(), path)
	if len(d.errs) > 0 {
		return
	}
	if err := n.Decode(out); err != nil {
		d.errorf(n.Line, orRoot(path), "%v", err)
	}
}

func orRoot(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

func (d *decoder) check(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Tag == "!!null" {
		return // an empty value is the zero value
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface {
		return // anything goes; the consumer checks (routing.fuse)
	}
	if om, ok := reflect.Zero(t).Interface().(orderedMap); ok {
		d.checkMap(n, om.valueType(), path)
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		d.checkLeaf(n, t, path)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		d.checkStruct(n, t, path)
	case reflect.Map:
		d.checkMap(n, t.Elem(), path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(n.Line, orRoot(path), "want a list, like [a, b]")
			return
		}
		for i, c := range n.Content {
			d.check(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		d.checkLeaf(n, t, path)
	}
}

func (d *decoder) checkLeaf(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n.Line, orRoot(path), "want a single value, not a %s", kindName(n.Kind))
		return
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			err = fmt.Errorf("%q is not a %s", n.Value, typeName(t))
		}
		d.errorf(n.Line, orRoot(path), "%v", err)
	}
}

func (d *decoder) checkMap(n *yaml.Node, elem reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, orRoot(path), "want a mapping (key: value), not a %s", kindName(n.Kind))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			d.errorf(k.Line, join(path, k.Value), "given twice")
		}
		seen[k.Value] = true
		d.check(v, elem, join(path, k.Value))
	}
}

func (d *decoder) checkStruct(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, orRoot(path), "want a mapping (key: value), not a %s", kindName(n.Kind))
		return
	}
	fields := yamlFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fields[k.Value]
		if !ok {
			d.errorf(k.Line, join(path, k.Value), "unknown key%s", suggest(k.Value, t))
			continue
		}
		d.check(v, f.Type, join(path, k.Value))
	}
}

func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag != "" && tag != "-" {
			out[tag] = f
		}
	}
	return out
}

// suggest names the closest known key when the given one looks like a typo.
func suggest(key string, t reflect.Type) string {
	names := slices.Sorted(maps.Keys(yamlFields(t)))
	best, bestDist := "", 3
	for _, name := range names {
		if dist := editdist.Distance(key, name, bestDist); dist < bestDist {
			best, bestDist = name, dist
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return " (known keys: " + strings.Join(names, ", ") + ")"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	default:
		return "value"
	}
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean (true or false)"
	case reflect.Int, reflect.Int64:
		return "whole number"
	case reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	default:
		return t.String()
	}
}
