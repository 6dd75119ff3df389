-- pandoc filter for the man pages: the upper-case level-1 headings of the
-- man page's own parts (NAME, SYNOPSIS, ...) stay sections; the title of the
-- docs page (its only level-1 heading) is dropped, as the man page has its
-- own; the docs page's sections (##) become man sections and their
-- subsections (###) man subsections.
function Header(h)
  if h.level == 1 then
    if pandoc.utils.stringify(h):match('^[A-Z][A-Z ]*$') then
      return h
    end
    return {}
  end
  h.level = h.level - 1
  return h
end
