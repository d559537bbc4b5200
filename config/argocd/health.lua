-- Argo CD health check for every kind of the group api.clever-cloud.com (clever-operator).
-- Install: docs/argocd.md (argocd-cm, key resource.customizations). It reads the status the
-- operator writes, as kstatus (Flux) reads it:
--   no status yet                                          -> Progressing
--   Migrating=True (a plan, version or region migration)   -> Progressing, the running step
--   status.observedGeneration behind metadata.generation   -> Progressing (Suspended if paused:
--                                                             the change waits for the unpause)
--   Stalled=True (a human must act: unknown plan, ...)     -> Degraded, with its message
--   Paused=True (annotation api.clever-cloud.com/paused)   -> Suspended
--   Ready=True on the current generation                   -> Healthy
--   anything else (provisioning, API unavailable, ...)     -> Progressing, Ready's message
-- Argo CD runs it without Lua's standard libraries by default: base functions only.
local hs = {}

local function condition(conditions, ctype)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == ctype then
      return c
    end
  end
  return nil
end

local function isTrue(c)
  return c ~= nil and c.status == "True"
end

local function messageOf(c, default)
  if c ~= nil and c.message ~= nil and c.message ~= "" then
    return c.message
  end
  return default
end

if obj.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for clever-operator to handle the resource"
  return hs
end

local conditions = obj.status.conditions
local ready = condition(conditions, "Ready")
local paused = condition(conditions, "Paused")
local migrating = condition(conditions, "Migrating")
local stalled = condition(conditions, "Stalled")
local generation = obj.metadata.generation or 0
local observed = obj.status.observedGeneration or 0

if obj.metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = messageOf(ready, "Deleting")
  return hs
end

if isTrue(migrating) then
  hs.status = "Progressing"
  hs.message = messageOf(migrating, "Migrating")
  return hs
end

if observed < generation then
  if isTrue(paused) then
    hs.status = "Suspended"
    hs.message = "Paused: the change to generation " .. tostring(generation) .. " waits until the resource is unpaused"
    return hs
  end
  hs.status = "Progressing"
  hs.message = "Waiting for clever-operator to handle generation " .. tostring(generation) .. " (observed: " .. tostring(observed) .. ")"
  return hs
end

if isTrue(stalled) then
  hs.status = "Degraded"
  hs.message = messageOf(stalled, "Stalled")
  return hs
end

if isTrue(paused) then
  hs.status = "Suspended"
  hs.message = messageOf(paused, "Paused")
  return hs
end

if isTrue(ready) and (ready.observedGeneration == nil or ready.observedGeneration >= generation) then
  hs.status = "Healthy"
  hs.message = messageOf(ready, "Ready")
  return hs
end

hs.status = "Progressing"
hs.message = messageOf(ready, "Waiting for the add-on to be Ready")
return hs
