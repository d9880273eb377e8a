package routing

import (
	"strings"
	"testing"
)

// A request in Chinese, Japanese or Korean finds a tool described in
// English, and one in English a tool described in Chinese, through the
// translation table; the request's words still win where the catalog
// knows them.
func TestTranslationsCrossLanguages(t *testing.T) {
	english := []Tool{
		{Name: "get_weather", Description: "Get the weather forecast for a city."},
		{Name: "read_file", Description: "Read the contents of a file."},
		{Name: "send_email", Description: "Send an email message to a recipient."},
		{Name: "send_sms", Description: "Send an SMS."},
		{Name: "stock_price", Description: "Current stock price of a company."},
	}
	chinese := []Tool{
		{Name: "tianqi", Description: "获取指定城市的天气预报"},
		{Name: "wenjian", Description: "读取文件的内容"},
		{Name: "youjian", Description: "发送邮件给收件人"},
	}
	for _, tc := range []struct {
		name    string
		tools   []Tool
		request string
		want    string
	}{
		{"Chinese request, English tools", english, "查询北京的天气", "get_weather"},
		{"Japanese request, English tools", english, "東京の天気を教えて", "get_weather"},
		{"Korean request, English tools", english, "서울 날씨 알려줘", "get_weather"},
		{"Chinese request for a file", english, "读取这个文件", "read_file"},
		{"Japanese request for a file", english, "このファイルを読んで", "read_file"},
		{"Japanese request with a lengthened vowel", english, "メールを送って", "send_email"},
		{"Korean request for a file", english, "이 파일 읽어줘", "read_file"},
		{"traditional Chinese request", english, "查詢台積電的股票價格", "stock_price"},
		{"English request, Chinese tools", chinese, "weather forecast for Beijing", "tianqi"},
		{"English request, Chinese tools, email", chinese, "send an email to Li", "youjian"},
		{"Chinese request, Chinese tools", chinese, "读取文件", "wenjian"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := NewIndex(IndexOptions{})
			ix.SetUpstream("up", tc.tools)
			hits := ix.Search(tc.request, 3)
			if len(hits) == 0 || hits[0].Name != tc.want {
				t.Fatalf("got %v, want %s first", hits, tc.want)
			}
			if hits[0].Coverage < DefaultAbstainCoverage {
				t.Errorf("%s covers %.2f of the request, under the router's abstention at %.2f", tc.want, hits[0].Coverage, DefaultAbstainCoverage)
			}
		})
	}
}

// Every translation group's English words are lower-case words that the
// tokenizer keeps, and every other word is one term of two characters,
// as the tokenizer splits them.
func TestTranslationTableIsWellFormed(t *testing.T) {
	for _, g := range translationGroups {
		en, rest, ok := strings.Cut(g, ":")
		if !ok || len(strings.Fields(en)) == 0 || len(strings.Fields(rest)) == 0 {
			t.Errorf("%q: want \"english words: word word ...\"", g)
			continue
		}
		for _, e := range strings.Fields(en) {
			if terms := NewTokenizer(TokenizerOptions{}).Tokens(e); len(terms) != 1 || !isASCIIAlpha(e) {
				t.Errorf("%q: English word %q tokenizes as %q, want one lower-case word", g, e, terms)
			}
		}
		for _, w := range strings.Fields(rest) {
			if n := len([]rune(w)); n != 2 {
				t.Errorf("%q: %q has %d characters, want 2 (one bigram)", g, w, n)
			}
			var terms []string
			(&Tokenizer{}).each(w, func(term string, _ wordKind) { terms = append(terms, term) })
			if len(terms) != 1 || terms[0] != w {
				t.Errorf("%q: %q tokenizes as %q, want itself", g, w, terms)
			}
		}
	}
}

// A request in Chinese reaches the one tool of a small English catalog
// that does what it asks, through words of the translation table: here
// "calculate square root" among a calculator's other operations.
func TestTranslationsReachAnOperation(t *testing.T) {
	calculator := []Tool{
		{Name: "calculator_add", Description: "Calculate the sum of two numbers."},
		{Name: "calculator_subtract", Description: "Calculate the difference of two numbers."},
		{Name: "calculator_multiply", Description: "Calculate the product of two numbers: multiply them."},
		{Name: "calculator_divide", Description: "Calculate the quotient of two numbers."},
		{Name: "calculator_sqrt", Description: "Calculate the square root of a number."},
		{Name: "calculator_log", Description: "Calculate the natural logarithm of a number."},
		{Name: "calculator_power", Description: "Calculate a number raised to a power."},
		{Name: "read_file", Description: "Read the contents of a file."},
		{Name: "get_weather", Description: "Get the weather forecast for a city."},
	}
	for _, tc := range []struct {
		request, want string
	}{
		{"计算平方根", "calculator_sqrt"},
		{"计算16的平方根", "calculator_sqrt"},
		{"計算平方根", "calculator_sqrt"},
		{"제곱근 계산", "calculator_sqrt"},
		{"两个数相乘", "calculator_multiply"},
		{"计算对数", "calculator_log"},
		{"対数を計算して", "calculator_log"},
	} {
		t.Run(tc.request, func(t *testing.T) {
			ix := NewIndex(IndexOptions{})
			ix.SetUpstream("calc", calculator)
			hits := ix.Search(tc.request, 3)
			if len(hits) == 0 || hits[0].Name != tc.want {
				t.Fatalf("got %v, want %s first", hits, tc.want)
			}
			if len(hits) > 1 && hits[1].Score >= hits[0].Score {
				t.Errorf("%s ties %s at %.3f", hits[1].Name, tc.want, hits[0].Score)
			}
		})
	}
}
