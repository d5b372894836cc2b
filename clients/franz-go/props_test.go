package main

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestPropertiesAgreeWithTheTable holds props.go to properties.tsv, the table kafkabench
// checks a scenario's franz-go settings against: every name the table lists is one the
// worker sets, on the same side, and the worker knows no name the table does not list (a
// name check lets through must never be refused here, nor the reverse).
func TestPropertiesAgreeWithTheTable(t *testing.T) {
	f, err := os.Open("properties.tsv")
	if os.IsNotExist(err) {
		t.Skip("no properties.tsv (kafkabench's franz-go name table) beside the worker")
	}
	if err != nil {
		t.Fatalf("the property table: %v", err)
	}
	defer f.Close()
	table := map[string]string{}
	sc := bufio.NewScanner(f)
	header := true
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if header {
			header = false
			continue
		}
		if len(cols) < 2 {
			t.Fatalf("a row of %d columns: %q", len(cols), line)
		}
		side := cols[1]
		if side == "consumer" {
			side = "reader"
		}
		table[cols[0]] = side
	}
	if len(table) == 0 {
		t.Fatal("the property table is empty")
	}
	for name, side := range table {
		p, ok := properties[name]
		if name == "group.id" {
			continue // the reader's group, from setup (ConsumerGroup)
		}
		if !ok {
			t.Errorf("%s (%s) is in properties.tsv but the worker has no option for it", name, side)
		} else if p.role != side {
			t.Errorf("%s: the table says %s, the worker %s", name, side, p.role)
		}
	}
	for name := range properties {
		if _, ok := table[name]; !ok {
			t.Errorf("the worker sets %s, which properties.tsv does not list (check refuses it)", name)
		}
	}
}
