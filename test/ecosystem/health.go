// Package ecosystem tests the operator with the tools platform teams run next to it: the
// Argo CD health check (config/argocd/health.lua) under gopher-lua as Argo CD runs it, kstatus
// (Flux, kubectl wait), and two operator instances that split the resources (--watch-selector).
package ecosystem

import (
	"context"
	"fmt"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Health is what an Argo CD health script returns (gitops-engine's HealthStatus).
type Health struct {
	Status  string
	Message string
}

// validStatuses are the health statuses Argo CD accepts from a script (anything else reads as
// Unknown with "Lua returned an invalid health status").
var validStatuses = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

// RunHealth runs a health script the way Argo CD's util/lua VM does (argoproj/argo-cd
// util/lua/lua.go, runLua and ExecuteHealthLua), with the gopher-lua version Argo CD uses:
// standard libraries off (the default, resource.customizations.useOpenLibs unset) except the
// package, base and table libraries, a one-second budget, the resource as the global obj
// (decoded as its decodeValue does: maps and arrays to tables, numbers to numbers), and the
// script's return value, which must be a table whose status is a valid health status.
func RunHealth(script string, obj map[string]any) (Health, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.fn), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return Health{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", decodeValue(l, obj))
	if err := l.DoString(script); err != nil {
		return Health{}, err
	}
	ret := l.Get(-1)
	t, ok := ret.(*lua.LTable)
	if !ok {
		return Health{}, fmt.Errorf("expect table output from Lua script, not %s", ret.Type())
	}
	h := Health{}
	if s, ok := t.RawGetString("status").(lua.LString); ok {
		h.Status = string(s)
	}
	if m, ok := t.RawGetString("message").(lua.LString); ok {
		h.Message = string(m)
	}
	if !validStatuses[h.Status] {
		return Health{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
	}
	return h, nil
}

// decodeValue converts a resource (as unstructured holds it) into Lua values, as Argo CD does.
func decodeValue(l *lua.LState, v any) lua.LValue {
	switch c := v.(type) {
	case bool:
		return lua.LBool(c)
	case float64:
		return lua.LNumber(c)
	case int64:
		return lua.LNumber(c)
	case int:
		return lua.LNumber(c)
	case int32:
		return lua.LNumber(c)
	case string:
		return lua.LString(c)
	case []any:
		arr := l.CreateTable(len(c), 0)
		for _, item := range c {
			arr.Append(decodeValue(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(c))
		for k, item := range c {
			tbl.RawSetH(lua.LString(k), decodeValue(l, item))
		}
		return tbl
	}
	return lua.LNil
}
