-- A headless Neovim session with its built-in LSP client, driven by tests/integrations/test_neovim.py:
-- open a file of a project, wait for reshard-lint's diagnostics, apply the quick fix
-- offered for the first one, and write what the editor saw as JSON.
local py, file, root, out = os.getenv("RSH_PY"), os.getenv("RSH_FILE"), os.getenv("RSH_ROOT"), os.getenv("RSH_OUT")
local result = { diagnostics = {} }

local function finish()
  local f = assert(io.open(out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qall!")
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start({ name = "reshard-lint", cmd = { py, "-m", "reshard_lint.frontends.lsp" }, root_dir = root })
  result.attached = client_id ~= nil
  result.published = vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  local diags = vim.diagnostic.get(buf)
  for _, d in ipairs(diags) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(result.diagnostics, {
      line = d.lnum, col = d.col, code = d.code, message = d.message,
      related = lsp.relatedInformation or vim.NIL,
    })
  end
  if #diags == 0 then return end
  local d = diags[1]
  local client = vim.lsp.get_client_by_id(client_id)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
    context = { diagnostics = { d.user_data.lsp }, only = { "quickfix" } },
  }
  local response = client:request_sync("textDocument/codeAction", params, 30000, buf)
  result.actions = {}
  for _, action in ipairs((response or {}).result or {}) do
    table.insert(result.actions, action.title)
  end
  for _, action in ipairs((response or {}).result or {}) do
    if action.edit and not action.title:find("noqa", 1, true) then
      vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
      result.applied = action.title
      break
    end
  end
  result.text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end)
if not ok then result.error = tostring(err) end
finish()
