package apiresources

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// ParseKubectl reads the output of `kubectl api-resources -o wide` (or without -o wide):
// columns NAME, SHORTNAMES, APIVERSION, NAMESPACED, KIND, ... aligned under their headers.
// Columns are cut at the headers' positions, since SHORTNAMES is often empty.
func ParseKubectl(r io.Reader) (*Table, error) {
	sc := bufio.NewScanner(r)
	var cols map[string]int
	var order []int
	t := &Table{}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		if cols == nil {
			cols, order = headers(text)
			for _, h := range []string{"NAME", "APIVERSION", "NAMESPACED", "KIND"} {
				if _, ok := cols[h]; !ok {
					return nil, fmt.Errorf("line 1: no %s column: want the output of kubectl api-resources -o wide", h)
				}
			}
			continue
		}
		cell := func(h string) string {
			start := cols[h]
			if start >= len(text) {
				return ""
			}
			end := len(text)
			for _, o := range order {
				if o > start {
					end = min(o, len(text))
					break
				}
			}
			return strings.TrimSpace(text[start:end])
		}
		name, apiVersion, kind := cell("NAME"), cell("APIVERSION"), cell("KIND")
		if name == "" || apiVersion == "" || kind == "" {
			return nil, fmt.Errorf("line %d: want NAME, APIVERSION and KIND, got %q", line, text)
		}
		group, version, ok := strings.Cut(apiVersion, "/")
		if !ok {
			group, version = "", apiVersion
		}
		t.Resources = append(t.Resources, Resource{Group: group, Versions: []string{version}, Plural: name,
			Kind: kind, Namespaced: cell("NAMESPACED") == "true"})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cols == nil {
		return nil, fmt.Errorf("empty: want the output of kubectl api-resources -o wide")
	}
	t.Sort()
	return t, nil
}

// headers returns each header's start column, and the starts in order.
func headers(line string) (map[string]int, []int) {
	cols := map[string]int{}
	var order []int
	for i := 0; i < len(line); {
		if line[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] != ' ' {
			j++
		}
		cols[line[i:j]] = i
		order = append(order, i)
		i = j
	}
	return cols, order
}
