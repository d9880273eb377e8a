package eval

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcp-router/mcp-router/routing"
)

// learnFixture has three weather tools, each asked for once with "forecast"
// words absent from the request, one chess tool asked for ten ways with
// "game", and filler tools so that words are rare among them.
func learnFixture() []learnExample {
	var ex []learnExample
	for i, city := range []string{"Paris", "Oslo", "Lima"} {
		ex = append(ex, learnExample{Query: "weather in " + city, Gold: []routing.Tool{
			{Name: fmt.Sprintf("wx%d", i), Description: "Daily forecast by city."}}})
	}
	for i := range 10 {
		ex = append(ex, learnExample{Query: fmt.Sprintf("play a game, round %d", i), Gold: []routing.Tool{
			{Name: "chess", Description: "Play chess against an engine."}}})
	}
	for i := range 20 {
		ex = append(ex, learnExample{Query: fmt.Sprintf("thing %d", i), Gold: []routing.Tool{
			{Name: fmt.Sprintf("tool%d", i), Description: fmt.Sprintf("Tool number %c.", 'a'+i)}}})
	}
	return ex
}

// A pair is learned from distinct tools: three weather tools that say
// "forecast" teach weather → forecast; one chess tool asked for ten
// times teaches nothing about "game".
func TestLearnCountsTools(t *testing.T) {
	got := learnTable(learnFixture(), learnOptions{MaxDF: 1, MinLift: 5, PerWord: 3})
	if !slices.Contains(got["weather"], "forecast") {
		t.Errorf("weather: %v, want forecast among its targets (table %v)", got["weather"], got)
	}
	if g, ok := got["game"]; ok {
		t.Errorf("game: %v, want no entry: one tool asked for many times is not meaning", g)
	}
	if _, ok := got["forecast"]; ok {
		t.Errorf("forecast: a word of no request has an entry: %v", got)
	}
}

// learnExamplesOf drops requests whose gold tools the catalog lacks.
func TestExamplesFindsGoldByName(t *testing.T) {
	tools := []routing.Tool{{Name: "a"}, {Name: "b"}}
	got := learnExamplesOf(tools, []string{"q1", "q2"}, [][]string{{"a", "zz"}, {"zz"}})
	if len(got) != 1 || len(got[0].Gold) != 1 || got[0].Gold[0].Name != "a" {
		t.Fatalf("got %+v, want q1 with a alone", got)
	}
}
