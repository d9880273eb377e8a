package routing

import (
	"context"
	"fmt"
	"testing"
)

func TestZZProbe(t *testing.T) {
	r := seedRouter(t)
	for _, q := range []string{"remember that Ada likes Go", "remember that Alice works at Acme", "forget that Ada likes Go", "what do you know about Ada", "read a file from the notes folder"} {
		d := r.Route(context.Background(), Request{Query: q})
		fmt.Println(q, d.Abstained)
		for _, c := range d.Ranked[:min(9, len(d.Ranked))] {
			fmt.Printf("  %s %.3f\n", c.Name, c.Score)
		}
		fmt.Println("  sel", names(d.Selected), d.Alerts)
	}
}
